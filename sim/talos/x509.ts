// Minimal X.509 v3 issuing with node:crypto (Node has no built-in certificate issuing): a DER encoder for the few
// ASN.1 types a certificate needs, and Ed25519 signing. Enough for a Talos-like PKI (CA, apid server, client certs).
import * as crypto from "node:crypto";
import * as net from "node:net";

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), len(content.length), content]);
const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 | n, content);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, "utf8"));

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, v[0] & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split(".").map(Number);
  const out: number[] = [parts[0] * 40 + parts[1]];
  for (const p of parts.slice(2)) {
    const enc: number[] = [p & 0x7f];
    for (let v = p >>> 7; v > 0; v >>>= 7) enc.unshift(0x80 | (v & 0x7f));
    out.push(...enc);
  }
  return tlv(0x06, Buffer.from(out));
}

/** BIT STRING of a KeyUsage-style flag byte (bit 0 = MSB), with DER's trailing-zero rule. */
function flagBits(byte: number): Buffer {
  let unused = 0;
  while (unused < 7 && ((byte >> unused) & 1) === 0) unused++;
  return tlv(0x03, Buffer.from([unused, byte]));
}
const bitString = (b: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z"; // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

const OID = {
  ed25519: "1.3.101.112",
  cn: "2.5.4.3",
  o: "2.5.4.10",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyId: "2.5.29.14",
  authorityKeyId: "2.5.29.35",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
};
export const EKU = { serverAuth: OID.serverAuth, clientAuth: OID.clientAuth } as const;

export interface Subject {
  commonName?: string;
  /** Organization values (Talos: roles such as `os:admin`), in one RDN like Go's pkix.Name. */
  organization?: string[];
}

function name(s: Subject): Buffer {
  const rdns: Buffer[] = [];
  if (s.organization?.length) rdns.push(set(...s.organization.map((o) => seq(oid(OID.o), utf8(o)))));
  if (s.commonName) rdns.push(set(seq(oid(OID.cn), utf8(s.commonName))));
  return seq(...rdns);
}

const ext = (id: string, critical: boolean, value: Buffer): Buffer =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

function keyId(pub: crypto.KeyObject): Buffer {
  const spki = pub.export({ type: "spki", format: "der" });
  return crypto.createHash("sha1").update(spki.subarray(spki.length - 32)).digest();
}

export interface KeyPair {
  privateKey: crypto.KeyObject;
  publicKey: crypto.KeyObject;
}

export const ed25519 = (): KeyPair => crypto.generateKeyPairSync("ed25519");

export interface IssueOptions {
  subject: Subject;
  /** Key pair of the new certificate. */
  keys: KeyPair;
  /** Issuer certificate subject and key; omit for a self-signed CA. */
  issuer?: { subject: Subject; keys: KeyPair };
  ca?: boolean;
  extKeyUsage?: string[];
  /** DNS names and IP addresses. */
  altNames?: string[];
  validDays?: number;
}

/** Issues an Ed25519-signed certificate; returns it as PEM. */
export function issueCertificate(o: IssueOptions): string {
  const issuer = o.issuer ?? { subject: o.subject, keys: o.keys };
  const now = Date.now();
  const serial = crypto.randomBytes(16);
  serial[0] &= 0x7f;
  const exts: Buffer[] = [
    ext(OID.basicConstraints, true, o.ca ? seq(bool(true)) : seq()),
    // digitalSignature (bit 0) + keyCertSign (bit 5) + cRLSign (bit 6) for a CA
    ext(OID.keyUsage, true, flagBits(o.ca ? 0x86 : 0x80)),
    ext(OID.subjectKeyId, false, octets(keyId(o.keys.publicKey))),
  ];
  if (o.issuer) exts.push(ext(OID.authorityKeyId, false, seq(tlv(0x80, keyId(issuer.keys.publicKey)))));
  if (o.extKeyUsage?.length) exts.push(ext(OID.extKeyUsage, false, seq(...o.extKeyUsage.map(oid))));
  if (o.altNames?.length) {
    const names = o.altNames.map((n) => {
      const family = net.isIP(n);
      if (family === 4) return tlv(0x87, Buffer.from(n.split(".").map(Number)));
      if (family === 6) return tlv(0x87, ipv6Bytes(n));
      return tlv(0x82, Buffer.from(n, "ascii"));
    });
    exts.push(ext(OID.subjectAltName, false, seq(...names)));
  }
  const algorithm = seq(oid(OID.ed25519));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name(issuer.subject),
    seq(time(new Date(now - 3600_000)), time(new Date(now + (o.validDays ?? 365) * 86400_000))),
    name(o.subject),
    o.keys.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, seq(...exts)),
  );
  const signature = crypto.sign(null, tbs, issuer.keys.privateKey);
  const der = seq(tbs, algorithm, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString("base64").replace(/(.{64})/g, "$1\n").replace(/\n$/, "")}\n-----END CERTIFICATE-----\n`;
}

function ipv6Bytes(ip: string): Buffer {
  const [head, tail] = ip.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  return Buffer.from(groups.flatMap((g) => { const v = parseInt(g, 16); return [v >> 8, v & 0xff]; }));
}

/** PKCS#8 PEM of a private key. */
export const privateKeyPem = (k: crypto.KeyObject): string => k.export({ type: "pkcs8", format: "pem" }).toString();
