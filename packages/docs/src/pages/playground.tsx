/**
 * /playground: try any pipeline from the browser. The page itself is a shell; the playground
 * (the contract's schemas and validator, the client) is imported lazily, in the browser only, so
 * its code is a chunk of its own that no other page loads.
 */
import BrowserOnly from '@docusaurus/BrowserOnly';
import Layout from '@theme/Layout';
import { lazy, type ReactNode, Suspense } from 'react';

const Playground = lazy(() => import('../components/playground/Playground.tsx'));

export default function PlaygroundPage(): ReactNode {
  const fallback = <p>Loading the playground…</p>;
  return (
    <Layout
      title="Playground"
      description="Run any imagegen pipeline from the browser: a form from the API contract, live progress, results, and the same request as code."
    >
      <main className="container margin-vert--lg">
        <h1>Playground</h1>
        <BrowserOnly fallback={fallback}>
          {() => (
            <Suspense fallback={fallback}>
              <Playground />
            </Suspense>
          )}
        </BrowserOnly>
      </main>
    </Layout>
  );
}
