export { connectNats, type PaddockNatsOptions } from './connect';
export { credsInfo, formatCreds, readCredsFile, readPrivateFile, renewalDue, writeSecretFile, type CredsInfo } from './creds';
export { NatsUserIssuer, type IssuedCreds, type IssueOptions } from './issuer';
export * from './installation';
export { openInstallationDir, type InstallationDir, type InstallationDirOptions } from './installation-dir';
export { readSigningKeyFile } from './signing-key-file';
