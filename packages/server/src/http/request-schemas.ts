import { type Endpoint, endpoints } from '@imagegen/contract';

/** The JSON body schemas of the endpoint table, by method and path as the routes are registered. */
const schemas = new Map<string, NonNullable<Endpoint['request']>>(
  endpoints.flatMap((endpoint) =>
    endpoint.request ? [[`${endpoint.method} ${endpoint.path}`, endpoint.request]] : [],
  ),
);

export function requestSchemaOf(method: string, url: string): Endpoint['request'] {
  return schemas.get(`${method} ${url}`);
}
