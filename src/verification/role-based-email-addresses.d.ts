/** The package ships plain CommonJS (an array of role prefixes, lower case) without types. */
declare module "role-based-email-addresses" {
  const prefixes: string[];
  export default prefixes;
}
