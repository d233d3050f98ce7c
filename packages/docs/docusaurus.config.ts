import path from 'node:path';
import type * as Preset from '@docusaurus/preset-classic';
import type { Config, Plugin } from '@docusaurus/types';
import { searchSettingsFromEnv } from '@imagegen/search/settings';
import { themes as prismThemes } from 'prism-react-renderer';
import { siteLinks } from './site-links.ts';

const links = siteLinks();

/** The footer's years: from the first release to the year the site was built. */
const FIRST_YEAR = 2024;
const builtYear = new Date().getFullYear();
const copyrightYears = builtYear > FIRST_YEAR ? `${FIRST_YEAR}–${builtYear}` : String(FIRST_YEAR);

/**
 * Docusaurus reloads the whole page when a route's chunks fail to load during client navigation.
 * The site shows the error and a Retry button instead, so this plugin swaps core's
 * PendingNavigation (not a theme component, hence not swizzlable) for ours, which differs
 * only in that failure branch.
 */
function retryableNavigation(): Plugin {
  return {
    name: 'imagegen-retryable-navigation',
    configureWebpack(_config, _isServer, utils) {
      const bundler = utils.currentBundler.instance as unknown as {
        NormalModuleReplacementPlugin: new (pattern: RegExp, replacement: string) => unknown;
      };
      return {
        plugins: [
          new bundler.NormalModuleReplacementPlugin(
            /^\.\/PendingNavigation$/,
            // jiti loads this config as CommonJS, where `import.meta` does not exist.
            path.resolve(__dirname, 'src/client/pending-navigation.tsx'),
          ) as never,
        ],
      };
    },
  };
}

/**
 * The playground runs the client (`@imagegen/client`) in the browser: the bundle takes the
 * workspace's TypeScript sources through the `imagegen-source` export condition, as the
 * repository's own TypeScript does, so the site needs no prior build of the client.
 */
function workspaceSources(): Plugin {
  return {
    name: 'imagegen-workspace-sources',
    configureWebpack: () => ({ resolve: { conditionNames: ['imagegen-source', '...'] } }),
  };
}

const SCHEMA_ONLY_STYLES = /[\\/]@scalar[\\/]|scalar-fit\.css/;

/**
 * Docusaurus merges every stylesheet into one global styles.css. Scalar's 300 KB stylesheet would
 * then load on every page (it triples their CSS), so it is left out of that group and stays in
 * the /schema page's own lazy chunk. Scalar's own build warnings are not ours to fix.
 */
function schemaStylesStayOnSchemaPage(): Plugin {
  return {
    name: 'imagegen-schema-styles',
    configureWebpack(_config, isServer) {
      const ignoreWarnings = [
        { module: /[\\/]@scalar[\\/]/ },
        // Its stylesheet's postcss warnings (about a hundred, on selectors postcss cannot rewrite
        // without :is(), which every browser the site supports has) come with no module: rspack
        // tests a copy of the warning that lacks it. Scalar scopes its CSS under .scalar-app, and
        // each of these warnings quotes the selector.
        { message: /"postcss-is-pseudo-class" plugin: Complex selectors in '[^'\n]*\.scalar-app\b/ },
      ];
      if (isServer) return { ignoreWarnings };
      return {
        ignoreWarnings,
        optimization: {
          splitChunks: {
            cacheGroups: {
              styles: {
                test: (module: { nameForCondition?: () => string | null; resource?: string }) =>
                  !SCHEMA_ONLY_STYLES.test(module.nameForCondition?.() ?? module.resource ?? ''),
              },
            },
          },
        },
      };
    },
  };
}

/**
 * The classic theme's inline colour-mode script picks dark only when the system says dark, so a
 * system with no preference gets light. Our default is dark while following an
 * explicit system preference until the reader chooses: this script runs right after
 * it and applies dark unless the reader chose a mode or the system asks for light.
 */
function darkUnlessSystemPrefersLight(): Plugin {
  const script = `(function(){try{var q=new URLSearchParams(location.search).get('docusaurus-theme');var s=localStorage.getItem('theme');if(q||s)return;var light=window.matchMedia('(prefers-color-scheme: light)').matches;document.documentElement.setAttribute('data-theme',light?'light':'dark');}catch(e){}})();`;
  return {
    name: 'imagegen-dark-by-default',
    injectHtmlTags: () => ({ preBodyTags: [{ tagName: 'script', innerHTML: script }] }),
  };
}

/**
 * The theme's /search page creates `liteClient(appId, apiKey)` from `algoliasearch/lite`, which
 * queries algolia.net. For that page's imports only, this swaps in a client of our own search
 * service (src/theme/SearchPage/lite-client.ts).
 */
function searchPageUsesOurSearchService(): Plugin {
  return {
    name: 'imagegen-search-page-client',
    configureWebpack(_config, _isServer, utils) {
      const bundler = utils.currentBundler.instance as unknown as {
        NormalModuleReplacementPlugin: new (
          pattern: RegExp,
          replace: (resource: { request: string; context: string }) => void,
        ) => unknown;
      };
      const client = path.resolve(__dirname, 'src/theme/SearchPage/lite-client.ts');
      return {
        plugins: [
          new bundler.NormalModuleReplacementPlugin(/^algoliasearch\/lite$/, (resource) => {
            if (/theme-search-algolia/.test(resource.context)) resource.request = client;
          }) as never,
        ],
      };
    },
  };
}

/**
 * DocSearch's settings, read by our own SearchBar (src/theme/SearchBar). The credentials, index
 * and hosts (`hosts` is ours: where our search service answers, 'self' being the docs host's own
 * origin) are this build's fallback: the docs host serves the values of the environment it runs
 * in (runtime-settings.ts). Docusaurus' type does not know `hosts`, so the object is declared
 * apart from the config literal.
 */
const searchConfig = {
  ...searchSettingsFromEnv(process.env),
  contextualSearch: true,
  searchPagePath: 'search',
  insights: true,
  missingResultsUrl: links.supportPortal,
};

const config: Config = {
  title: 'imagegen',
  tagline: 'Image generation API for developers: every generation an asynchronous task.',
  favicon: 'img/favicon.svg',
  url: process.env.IMAGEGEN_DOCS_SITE_URL ?? 'http://localhost:3000',
  baseUrl: process.env.IMAGEGEN_DOCS_BASE_URL ?? '/',
  organizationName: 'imagegen',
  projectName: 'imagegen',
  onBrokenLinks: 'throw',
  onBrokenAnchors: 'throw',
  markdown: { hooks: { onBrokenMarkdownLinks: 'throw' } },
  i18n: {
    defaultLocale: 'en',
    locales: ['en'],
    localeConfigs: { en: { label: 'English', direction: 'ltr' } },
  },
  future: {
    faster: true,
    // Full `v4: true` breaks `<!-- truncate -->` in blog posts; only this flag is wanted.
    v4: { removeLegacyPostBuildHeadAttribute: true },
  },
  customFields: { links },
  clientModules: ['./src/client/analytics.ts'],
  presets: [
    [
      'classic',
      {
        docs: {
          routeBasePath: '/',
          sidebarPath: './sidebars.ts',
          lastVersion: 'current',
          versions: { current: { label: 'Next' } },
        },
        blog: {
          path: 'blog',
          routeBasePath: 'guide',
          blogTitle: 'Guides',
          blogDescription: 'Walk-throughs that turn the API into products.',
          blogSidebarTitle: 'All guides',
          showReadingTime: true,
          onInlineAuthors: 'ignore',
          onUntruncatedBlogPosts: 'ignore',
          // The blog's routes are exactly the index, the archive and the posts: no feeds, no tag pages.
          feedOptions: { type: null },
        },
        theme: { customCss: './src/css/custom.css' },
        sitemap: false,
      } satisfies Preset.Options,
    ],
  ],
  plugins: [
    workspaceSources,
    retryableNavigation,
    schemaStylesStayOnSchemaPage,
    darkUnlessSystemPrefersLight,
    searchPageUsesOurSearchService,
  ],
  themeConfig: {
    image: 'img/social-card.png',
    metadata: [{ name: 'twitter:card', content: 'summary_large_image' }],
    colorMode: { defaultMode: 'dark', disableSwitch: false, respectPrefersColorScheme: true },
    announcementBar: {
      id: 'queued-image-urls-2024',
      content:
        'New: <code>queued_image_urls</code> returns download links before the task finishes. <a href="/Introduction/getting-started">Get started</a>',
      isCloseable: true,
    },
    navbar: {
      title: 'imagegen',
      hideOnScroll: true,
      logo: { alt: 'imagegen logo', src: 'img/logo.svg' },
      items: [
        { type: 'docSidebar', sidebarId: 'docs', position: 'left', label: 'Docs' },
        { to: '/guide', label: 'Guides', position: 'left' },
        { href: links.apiSchema, label: 'API Schema', position: 'left', target: '_self' },
        { to: '/playground', label: 'Playground', position: 'left' },
        { type: 'docsVersionDropdown', position: 'right' },
        { type: 'localeDropdown', position: 'right' },
        // Its address is a run-time setting (src/theme/NavbarItem/SignUpNavbarItem.tsx).
        { type: 'custom-signUp', label: 'Sign-up', position: 'right', className: 'navbar-signup' },
      ],
    },
    docs: { sidebar: { hideable: false, autoCollapseCategories: false } },
    tableOfContents: { minHeadingLevel: 2, maxHeadingLevel: 3 },
    footer: {
      style: 'dark',
      logo: { alt: 'imagegen logo', src: 'img/logo.svg', width: 40, height: 40 },
      links: [
        {
          title: 'Docs',
          items: [
            { label: 'Getting started', to: '/Introduction/getting-started' },
            { label: 'Pipelines', to: '/category/pipelines' },
            { label: 'API reference', href: links.apiSchema, target: '_self' },
          ],
        },
        {
          title: 'Product',
          items: [
            { label: 'Canvas app', href: links.canvasApp },
            { label: 'Pricing', href: links.pricing },
            { label: 'Enterprise plan', href: links.enterprisePlan },
          ],
        },
        {
          title: 'Help',
          items: [
            { label: 'Support portal', href: links.supportPortal },
            { label: 'Book a call', href: links.bookCall },
            { label: 'Guides', to: '/guide' },
          ],
        },
        {
          title: 'Legal',
          items: [
            { label: 'Terms', href: links.terms },
            { label: 'Privacy', href: links.privacy },
          ],
        },
      ],
      copyright: `Copyright © ${copyrightYears} imagegen.`,
    },
    algolia: searchConfig,
    prism: {
      // Visual Studio's themes keep every token at WCAG AA contrast; github's and dracula's do not.
      theme: prismThemes.vsLight,
      darkTheme: prismThemes.vsDark,
      additionalLanguages: ['bash', 'python', 'json'],
    },
  } satisfies Preset.ThemeConfig,
};

export default config;
