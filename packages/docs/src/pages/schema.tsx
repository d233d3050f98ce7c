/**
 * /schema: the interactive API reference. Scalar renders the live openapi.json of the API host
 * named in the page's run-time settings (the docs host's, else the build's). Scalar (and its
 * 300 KB stylesheet) is imported lazily by this page only, so no other page grows.
 */
import BrowserOnly from '@docusaurus/BrowserOnly';
import Layout from '@theme/Layout';
import { lazy, type ReactNode, Suspense } from 'react';
import { useRuntimeSettings } from '../client/runtime-settings.ts';

const ScalarReference = lazy(() => import('../components/ScalarReference.tsx'));

export default function SchemaPage(): ReactNode {
  const { apiUrl } = useRuntimeSettings();
  const url = `${apiUrl}/openapi.json`;
  const fallback = (
    <p className="container margin-vert--lg">
      Loading the API reference from <code>{url}</code>…
    </p>
  );
  return (
    <Layout
      title="API Schema"
      description="Interactive reference of every imagegen API call: paths, fields, bounds, defaults."
    >
      <main className="imagegen-schema">
        <h1 className="sr-only">API Schema</h1>
        <BrowserOnly fallback={fallback}>
          {() => (
            <Suspense fallback={fallback}>
              <ScalarReference url={url} />
            </Suspense>
          )}
        </BrowserOnly>
      </main>
    </Layout>
  );
}
