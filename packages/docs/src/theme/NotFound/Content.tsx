/**
 * Wraps the stock not-found content with the page's title. With the docs at the site's root, the
 * docs plugin answers unknown paths itself and shows this content without the stock NotFound
 * page's metadata, so the title was the site's bare name; it says what the page is instead.
 */
import { PageMetadata } from '@docusaurus/theme-common';
import type { WrapperProps } from '@docusaurus/types';
import type ContentType from '@theme/NotFound/Content';
import Content from '@theme-original/NotFound/Content';
import type { ReactNode } from 'react';

type Props = WrapperProps<typeof ContentType>;

export const NOT_FOUND_TITLE = 'Page not found';

export default function NotFoundContentWrapper(props: Props): ReactNode {
  return (
    <>
      <PageMetadata title={NOT_FOUND_TITLE} />
      <Content {...props} />
    </>
  );
}
