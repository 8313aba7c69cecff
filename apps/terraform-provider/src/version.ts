/** The provider's release, in the 0.26 series the seed configuration asks for (`~> 0.26`). Kept equal to package.json. */
export const PROVIDER_VERSION = '0.26.0';
/** Registry address Terraform knows it by (`source = "coreweave/coreweave"`). */
export const PROVIDER_ADDRESS = { hostname: 'registry.terraform.io', namespace: 'coreweave', type: 'coreweave' } as const;
