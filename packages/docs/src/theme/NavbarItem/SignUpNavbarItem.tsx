/**
 * The navbar's Sign-up link. Its address is the page's run-time setting `signUpUrl` (the docs
 * host serves IMAGEGEN_DOCS_SIGNUP_URL, by default the getting-started page that tells how to get
 * a key), so a site built once points at each deployment's own sign-up page. A site path is a
 * link within the site; a full URL opens as an external link.
 */
import type { Props } from '@theme/NavbarItem/DefaultNavbarItem';
import DefaultNavbarItem from '@theme/NavbarItem/DefaultNavbarItem';
import type { ReactNode } from 'react';
import { useRuntimeSettings } from '../../client/runtime-settings.ts';

export default function SignUpNavbarItem(props: Omit<Props, 'to' | 'href'>): ReactNode {
  const { signUpUrl } = useRuntimeSettings();
  const address = signUpUrl.startsWith('/') ? { to: signUpUrl } : { href: signUpUrl };
  return <DefaultNavbarItem {...props} {...address} />;
}
