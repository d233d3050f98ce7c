import { type Endpoint, endpointByPath } from '@imagegen/contract';

/** The JSON body schema of the endpoint a route serves, by its method and path as registered. */
export function requestSchemaOf(method: string, url: string): Endpoint['request'] {
  const endpoint = endpointByPath(url);
  return endpoint?.method === method ? endpoint.request : undefined;
}
