// The simulated cluster's Talos PKI: an Ed25519 OS CA, the apid server certificate (IP SANs of the endpoint), and
// client certificates with roles in O= and EKU clientAuth. A second, foreign CA backs the certificate-mismatch faults.
import { EKU, ed25519, issueCertificate, KeyPair, privateKeyPem, Subject } from "./x509";

export interface CertificateAuthority {
  subject: Subject;
  keys: KeyPair;
  certPem: string;
}

export interface ClientCredentials {
  /** PEM certificate. */
  crt: string;
  /** PEM PKCS#8 key under Talos' non-standard `ED25519 PRIVATE KEY` label (as talosctl writes it). */
  key: string;
}

export interface ClientCertOptions {
  /** Roles written to O=, default ["os:admin"]. */
  roles?: string[];
  /** Issue from a CA the nodes do not trust. */
  foreignCa?: boolean;
  /** Extended key usages, default exactly [clientAuth] (apid rejects anything else). */
  extKeyUsage?: string[];
}

export function newCa(commonName: string): CertificateAuthority {
  const subject: Subject = { commonName, organization: [commonName] };
  const keys = ed25519();
  return { subject, keys, certPem: issueCertificate({ subject, keys, ca: true, validDays: 3650 }) };
}

/** Relabels a PKCS#8 Ed25519 key PEM the way Talos writes it. */
export function talosKeyLabel(pkcs8Pem: string): string {
  return pkcs8Pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "-----$1 ED25519 PRIVATE KEY-----");
}

export class SimPki {
  readonly ca = newCa("talos");
  private foreign?: CertificateAuthority;

  /** A CA that is not the cluster's (for certificate-mismatch faults). */
  get foreignCa(): CertificateAuthority {
    return (this.foreign ??= newCa("talos-foreign"));
  }

  /** apid server certificate and key (PEM) for the given addresses/names. */
  serverCert(altNames: string[], opts: { foreignCa?: boolean } = {}): { cert: string; key: string } {
    const ca = opts.foreignCa ? this.foreignCa : this.ca;
    const keys = ed25519();
    const cert = issueCertificate({
      subject: { commonName: "apid" }, keys, issuer: ca, extKeyUsage: [EKU.serverAuth], altNames, validDays: 365,
    });
    return { cert, key: privateKeyPem(keys.privateKey) };
  }

  clientCert(opts: ClientCertOptions = {}): ClientCredentials {
    const ca = opts.foreignCa ? this.foreignCa : this.ca;
    const keys = ed25519();
    const crt = issueCertificate({
      subject: { organization: opts.roles ?? ["os:admin"] },
      keys,
      issuer: ca,
      extKeyUsage: opts.extKeyUsage ?? [EKU.clientAuth],
      validDays: 365,
    });
    return { crt, key: talosKeyLabel(privateKeyPem(keys.privateKey)) };
  }
}
