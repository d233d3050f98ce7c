import type { ReactNode } from 'react';
import { InlineCode } from './EngineNoteBody.tsx';
import type { EngineCatalogData } from './engine-note.ts';

/** A cell of request fields, each with its reason (`field`: why). */
function FieldReasons({
  reasons,
}: {
  reasons: readonly { readonly field: string; readonly why: string }[] | undefined;
}): ReactNode {
  return (
    <td>
      {reasons?.map((reason) => (
        <p key={reason.field + reason.why}>
          <code>{reason.field}</code>: <InlineCode text={reason.why} />
        </p>
      ))}
    </td>
  );
}

/**
 * What a server engine's servers need, pipeline by pipeline: the node classes its graphs use, the
 * model files each folder must hold, the request fields the engine refuses there and those it
 * takes no notice of in some case (the task runs and its notes say so), as the engine catalogue
 * has them from the compilers.
 * Kept free of theme imports for tests.
 */
export function ServerNeedsBody({
  catalog,
  engine,
}: {
  catalog: EngineCatalogData;
  engine: string;
}): ReactNode {
  const servers = catalog.serverEngines?.[engine];
  if (!servers) throw new Error(`ServerNeeds: the engine catalogue has no server engine "${engine}"`);
  return (
    <table data-server-engine={engine}>
      <thead>
        <tr>
          <th>Pipeline</th>
          <th>Model files</th>
          <th>Node packs and classes</th>
          <th>Refused fields</th>
          <th>Fields taken no notice of</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(servers.pipelines).map(([path, needs]) => (
          <tr key={path} data-pipeline={path}>
            <td>
              <code>{path}</code>
            </td>
            <td>
              {needs.models.map((model) => (
                <p key={model.folder + model.what}>
                  <code>{model.folder}</code>: <InlineCode text={model.what} />
                </p>
              ))}
            </td>
            <td>
              {needs.packs?.map((pack) => (
                <p key={pack.name}>
                  <a href={pack.repository}>
                    <code>{pack.name}</code>
                  </a>
                  {pack.when ? (
                    <>
                      {' '}
                      (<InlineCode text={pack.when} />)
                    </>
                  ) : null}
                </p>
              ))}
              <InlineCode text={needs.nodes.map((node) => `\`${node}\``).join(', ')} />
            </td>
            <FieldReasons reasons={needs.refuses} />
            <FieldReasons reasons={needs.ignores} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}
