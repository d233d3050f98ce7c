/**
 * The stock navbar item types, and ours: `custom-signUp`, the Sign-up link, whose address is a
 * run-time setting (SignUpNavbarItem.tsx).
 */
import ComponentTypes from '@theme-original/NavbarItem/ComponentTypes';
import SignUpNavbarItem from './SignUpNavbarItem.tsx';

export default {
  ...ComponentTypes,
  'custom-signUp': SignUpNavbarItem,
};
