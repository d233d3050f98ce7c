/**
 * A self-signed certificate for images.example.test (P-256, valid until 2125), made once with
 * openssl for the HTTPS tests: the fetcher must verify the certificate against the host NAME
 * while connecting to the address it checked. Test-only; it guards nothing.
 */
export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVT2yR3d6h6VoAWF+
idgNq5GntHO5BQWqW8LLDtMhuqihRANCAATQoOA2DSUVggfa6kFQ/2LLTolnLEEI
ogqkdmz38B9IB2+sNF+GaXwA/Jc8iNDvSNZn4453CqM7tcp0XV4hcO+4
-----END PRIVATE KEY-----`;

export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUORuBX8NWjFQ/50qnzz9NPMCg7GowCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTaW1hZ2VzLmV4YW1wbGUudGVzdDAgFw0yNjExMjEyMDQ5NTZa
GA8yMTI2MTAyODIwNDk1NlowHjEcMBoGA1UEAwwTaW1hZ2VzLmV4YW1wbGUudGVz
dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABNCg4DYNJRWCB9rqQVD/YstOiWcs
QQiiCqR2bPfwH0gHb6w0X4ZpfAD8lzyI0O9I1mfjjncKozu1ynRdXiFw77ijczBx
MB0GA1UdDgQWBBT2LBki2oKF33L9QjUFYmhoJiRFCDAfBgNVHSMEGDAWgBT2LBki
2oKF33L9QjUFYmhoJiRFCDAPBgNVHRMBAf8EBTADAQH/MB4GA1UdEQQXMBWCE2lt
YWdlcy5leGFtcGxlLnRlc3QwCgYIKoZIzj0EAwIDSAAwRQIhAOVId4fHcGO1MyQI
Ap6NbmWkm8i4t5XeVs7j0pi858MjAiA4xMkHaEJv4mDAjRmYqSgGcQwlJ3+kUOXe
Q+mpXrFGCw==
-----END CERTIFICATE-----`;
