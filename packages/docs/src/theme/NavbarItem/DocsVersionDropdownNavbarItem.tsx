/**
 * Wraps the stock version dropdown. With a single docs version (ours: current, labelled Next) the
 * stock item renders a plain link, but the site shows the version dropdown in the navbar even
 * then, so readers see which version they read and where others will appear. With two or more
 * versions the stock component is used unchanged.
 */
import { useDocsPreferredVersion, useVersions } from '@docusaurus/plugin-content-docs/client';
import type { Props } from '@theme/NavbarItem/DocsVersionDropdownNavbarItem';
import DropdownNavbarItem from '@theme/NavbarItem/DropdownNavbarItem';
import DocsVersionDropdownNavbarItem from '@theme-original/NavbarItem/DocsVersionDropdownNavbarItem';
import type { ReactNode } from 'react';

export default function DocsVersionDropdownNavbarItemWrapper(props: Props): ReactNode {
  const versions = useVersions(props.docsPluginId);
  const { savePreferredVersionName } = useDocsPreferredVersion(props.docsPluginId);
  const only = versions.length === 1 ? versions[0] : undefined;
  if (!only || props.dropdownItemsBefore.length + props.dropdownItemsAfter.length > 0) {
    return <DocsVersionDropdownNavbarItem {...props} />;
  }
  const mainDoc = only.docs.find((doc) => doc.id === only.mainDocId) ?? only.docs[0];
  const {
    docsPluginId,
    dropdownActiveClassDisabled,
    dropdownItemsBefore,
    dropdownItemsAfter,
    versions: _,
    ...rest
  } = props;
  return (
    <DropdownNavbarItem
      {...rest}
      label={only.label}
      items={[
        {
          label: only.label,
          to: mainDoc?.path ?? only.path,
          onClick: () => savePreferredVersionName(only.name),
        },
      ]}
    />
  );
}
