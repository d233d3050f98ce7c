import { useColorMode } from '@docusaurus/theme-common';
import { ApiReferenceReact } from '@scalar/api-reference-react';
import '@scalar/api-reference-react/style.css';
import './scalar-fit.css';
import { type ReactNode, useMemo } from 'react';

/**
 * Scalar configured to look like part of this site: our product name, the site's colour mode (the
 * site's toggle is the only one), and none of the vendor's own panels (client app button,
 * developer tools, MCP and agent prompts).
 */
export default function ScalarReference({ url }: { url: string }): ReactNode {
  const { colorMode } = useColorMode();
  const configuration = useMemo(
    () => ({
      url,
      title: 'imagegen API',
      metaData: { title: 'API Schema | imagegen' },
      hideClientButton: true,
      showDeveloperTools: 'never' as const,
      showToolbar: 'never' as const,
      hideDarkModeToggle: true,
      forceDarkModeState: colorMode,
      darkMode: colorMode === 'dark',
      withDefaultFonts: false,
      mcp: { disabled: true },
      agent: { disabled: true },
      defaultHttpClient: { targetKey: 'shell' as const, clientKey: 'curl' as const },
    }),
    [url, colorMode],
  );
  return <ApiReferenceReact configuration={configuration as never} />;
}
