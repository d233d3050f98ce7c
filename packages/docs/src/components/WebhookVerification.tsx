import CodeBlock from '@theme/CodeBlock';
import TabItem from '@theme/TabItem';
import Tabs from '@theme/Tabs';
import type { ReactNode } from 'react';

const SDK = `import { verifyWebhook } from '@imagegen/client';

// Resolves with the body, parsed, when the signature holds and the timestamp is within five
// minutes; rejects with a WebhookVerificationError otherwise. Node, browsers and edge runtimes.
// The body: the task's final status, then its id and path ({status, download_urls, id, path}).
const status = await verifyWebhook({ secret, headers: request.headers, body: rawBody });`;

const TYPESCRIPT = `import { createHmac, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks check: HMAC-SHA256 over "id.timestamp.body" with your secret. */
export function verifyWebhook(secret: string, headers: Headers, rawBody: string): boolean {
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signatures = headers.get('webhook-signature');
  if (!id || !timestamp || !signatures) return false;
  // Refuse replays: the timestamp must be within five minutes of now.
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${rawBody}\`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}`;

const PYTHON = `import base64, hashlib, hmac, time

def verify_webhook(secret: str, headers: dict, raw_body: bytes) -> bool:
    """Standard Webhooks check: HMAC-SHA256 over "id.timestamp.body" with your secret."""
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures):
        return False
    if abs(time.time() - int(timestamp)) > 300:  # refuse replays
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        version == "v1" and hmac.compare_digest(sig, expected)
        for version, _, sig in (entry.partition(",") for entry in signatures.split(" "))
    )`;

/** How to check a webhook's signature; the same on every page that accepts `webhook`. */
export default function WebhookVerification(): ReactNode {
  return (
    <Tabs groupId="language">
      <TabItem value="typescript" label="TypeScript">
        <CodeBlock language="ts">{TYPESCRIPT}</CodeBlock>
      </TabItem>
      <TabItem value="python" label="Python">
        <CodeBlock language="python">{PYTHON}</CodeBlock>
      </TabItem>
      <TabItem value="sdk" label="TypeScript SDK">
        <CodeBlock language="ts">{SDK}</CodeBlock>
      </TabItem>
    </Tabs>
  );
}
