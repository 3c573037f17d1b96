// Test PKI for the Kubernetes control plane, issued with the OpenSSL 3 CLI (Node has no X.509 issuing API).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { simMsg } from "./messages";

export interface KubePki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  /** Client certificates of kube-controller-manager and kube-scheduler (their bootstrap RBAC user names). */
  controllerManagerCert: string;
  controllerManagerKey: string;
  schedulerCert: string;
  schedulerKey: string;
  saKey: string;
  saPub: string;
}

function openssl(dir: string, args: string[], input?: string): void {
  try {
    execFileSync("openssl", args, { cwd: dir, stdio: ["pipe", "pipe", "pipe"], input });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(simMsg.opensslFailed(args[0], e.stderr?.toString().trim() || e.message));
  }
}

/**
 * Issues a CA, a serving cert (localhost, 127.0.0.1; kube-apiserver, kube-controller-manager and kube-scheduler serve
 * with it), client certs for admin (system:masters), system:kube-controller-manager and system:kube-scheduler, and the
 * service-account signing key shared by kube-apiserver and kube-controller-manager.
 */
export function issueKubePki(dir: string): KubePki {
  fs.mkdirSync(dir, { recursive: true });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(dir, ["req", "-x509", ...ec, "-days", "30", "-subj", "/CN=talos-gate-sim-ca", "-keyout", "ca.key", "-out", "ca.crt"]);
  fs.writeFileSync(path.join(dir, "server.ext"),
    "subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\n" +
    "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n");
  fs.writeFileSync(path.join(dir, "client.ext"), "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n");
  const leaf = (name: string, subj: string, ext: string) => {
    openssl(dir, ["req", ...ec, "-subj", subj, "-keyout", `${name}.key`, "-out", `${name}.csr`]);
    openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
      "-days", "30", "-extfile", ext, "-out", `${name}.crt`]);
  };
  leaf("apiserver", "/CN=kube-apiserver", "server.ext");
  leaf("admin", "/O=system:masters/CN=admin", "client.ext");
  // The user names the API server's bootstrap RBAC binds to the system:kube-controller-manager / system:kube-scheduler
  // ClusterRoles (plus system:volume-scheduler): their own identities, not admin.
  leaf("kube-controller-manager", "/CN=system:kube-controller-manager", "client.ext");
  leaf("kube-scheduler", "/CN=system:kube-scheduler", "client.ext");
  openssl(dir, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key"]);
  openssl(dir, ["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
  const p = (f: string) => path.join(dir, f);
  return {
    dir, caCert: p("ca.crt"), serverCert: p("apiserver.crt"), serverKey: p("apiserver.key"),
    adminCert: p("admin.crt"), adminKey: p("admin.key"),
    controllerManagerCert: p("kube-controller-manager.crt"), controllerManagerKey: p("kube-controller-manager.key"),
    schedulerCert: p("kube-scheduler.crt"), schedulerKey: p("kube-scheduler.key"),
    saKey: p("sa.key"), saPub: p("sa.pub"),
  };
}
