import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { bitString, bool, explicit, implicit, octetString, oid, sequence, set, time, unsignedInteger, utf8String } from './der';

/**
 * The provider's own TLS certificate, made fresh at every start (go-plugin "AutoMTLS"):
 * self-signed P-256, a CA (Terraform trusts exactly this certificate as its root) valid for
 * `localhost`, the name Terraform verifies, for a day.
 *
 * Node's crypto makes keys and signatures but not certificates; the certificate is written in
 * DER here (RFC 5280) rather than with an X.509 library because the provider starts several
 * times per Terraform command, and such a library costs more CPU to load than the rest of the
 * provider's start.
 */
export interface ServerCertificate {
  certPem: string;
  keyPem: string;
  der: Uint8Array;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

const extension = (id: string, critical: boolean, value: Buffer): Buffer => sequence(oid(id), ...(critical ? [bool(true)] : []), octetString(value));

/**
 * KeyUsage BIT STRING: digitalSignature (bit 0), keyAgreement (bit 4), keyCertSign (bit 5), bits
 * counted from the top of the byte; DER drops trailing zero bits, so 2 bits are unused.
 */
const KEY_USAGE = Buffer.from([0x03, 0x02, 0x02, 0b1000_1100]);

const pem = (label: string, der: Buffer): string => `-----BEGIN ${label}-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;

export function makeServerCertificate(now = new Date()): ServerCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const name = sequence(set(sequence(oid(OID.organization), utf8String('Paddock terraform-provider-coreweave'))), set(sequence(oid(OID.commonName), utf8String('localhost'))));
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(new Date(now.getTime() - 60_000)), time(new Date(now.getTime() + 24 * 3600_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      sequence(
        extension(OID.basicConstraints, true, sequence(bool(true))),
        extension(OID.keyUsage, true, KEY_USAGE),
        extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth), oid(OID.clientAuth))),
        extension(OID.subjectAltName, false, sequence(implicit(2, Buffer.from('localhost', 'ascii')))),
      ),
    ),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = sequence(tbs, algorithm, bitString(signature));
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return { certPem: pem('CERTIFICATE', der), keyPem, der: new Uint8Array(der) };
}
