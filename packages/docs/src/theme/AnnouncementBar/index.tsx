/**
 * Wraps the stock announcement bar. The stock bar hides itself before React runs through an
 * `<html data-announcement-bar-initially-dismissed>` flag read from storage; when the configured
 * bar id changes, React notices the new bar but leaves that flag set, so the new bar stays hidden
 * until a second reload. A changed id must show the bar again, so once React decides
 * the bar is active we clear the flag.
 */
import { useAnnouncementBar } from '@docusaurus/theme-common/internal';
import type { WrapperProps } from '@docusaurus/types';
import type AnnouncementBarType from '@theme/AnnouncementBar';
import AnnouncementBar from '@theme-original/AnnouncementBar';
import { type ReactNode, useEffect } from 'react';

type Props = WrapperProps<typeof AnnouncementBarType>;

export default function AnnouncementBarWrapper(props: Props): ReactNode {
  const { isActive } = useAnnouncementBar();
  useEffect(() => {
    if (isActive) document.documentElement.setAttribute('data-announcement-bar-initially-dismissed', 'false');
  }, [isActive]);
  return <AnnouncementBar {...props} />;
}
