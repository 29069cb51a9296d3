/*
 * The address policy of webhook endpoints: create/update-time refusal of literal private,
 * loopback, link-local, unique-local or metadata IPs, and the allowlist. It lives in
 * @herald/core (address-policy.ts) because attachment downloads apply the same rules.
 */
export { addressAllowList, classifyHost, hostAllowed, type AddressAllowList, type AddressClass } from '@herald/core';
