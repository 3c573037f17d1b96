// The kubeconfig found as kubectl finds it (client-go's loading rules): precedence, merging (the first file to set a
// value wins), missing files skipped, relative file references resolved against their own file. Files only, no
// cluster.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeconfigPrecedence, loadKubeconfig } from "../../../cli/kubeconfig";
import { CliError } from "../../../cli/messages";

describe("cli/kubeconfig", () => {
  let dir: string;
  const write = (rel: string, doc: unknown) => {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, YAML.stringify(doc));
    return file;
  };
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), "talos-gate-kubeconfig-")); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("looks at --kubeconfig alone, else $KUBECONFIG's list (duplicates dropped), else ~/.kube/config", () => {
    assert.deepEqual(kubeconfigPrecedence("/f", "/a:/b", "/home/u"), { explicit: true, files: ["/f"] });
    assert.deepEqual(kubeconfigPrecedence(undefined, "/a::/b:/a", "/home/u"), { explicit: false, files: ["/a", "/b"] });
    assert.deepEqual(kubeconfigPrecedence(undefined, "", "/home/u"), { explicit: false, files: ["/home/u/.kube/config"] });
  });

  it("merges $KUBECONFIG's files, the first to set current-context or an entry of a name winning; missing files skipped", () => {
    const a = write("a/config", {
      "current-context": "one",
      contexts: [{ name: "one", context: { cluster: "c", user: "u" } }],
      clusters: [{ name: "c", cluster: { server: "https://first:6443", "certificate-authority": "ca.crt" } }],
    });
    const b = write("b/config", {
      "current-context": "two",
      contexts: [{ name: "one", context: { cluster: "other", user: "other" } }, { name: "two", context: { cluster: "c", user: "u" } }],
      clusters: [{ name: "c", cluster: { server: "https://second:6443" } }],
      users: [{ name: "u", user: { "client-certificate": "../certs/u.crt", "client-key": "/abs/u.key", tokenFile: "token", exec: { command: "./bin/get-token" } } },
        { name: "path-exec", user: { exec: { command: "aws" } } }],
    });
    const k = loadKubeconfig(undefined, { KUBECONFIG: [path.join(dir, "missing"), a, b, a].join(path.delimiter) }, "/nowhere");
    assert.equal(k.file, a);
    assert.deepEqual(k.files, [a, b]);
    const doc = YAML.parse(k.text);
    assert.equal(doc["current-context"], "one");
    assert.deepEqual(doc.contexts.map((c: { name: string; context: { cluster: string } }) => [c.name, c.context.cluster]), [["one", "c"], ["two", "c"]]);
    assert.deepEqual(doc.clusters, [{ name: "c", cluster: { server: "https://first:6443", "certificate-authority": path.join(dir, "a", "ca.crt") } }]);
    // Relative to the file that holds them (client-go ResolveLocalPaths); a command found on PATH stays as it is.
    assert.deepEqual(doc.users[0].user, {
      "client-certificate": path.join(dir, "certs", "u.crt"), "client-key": "/abs/u.key", tokenFile: path.join(dir, "b", "token"),
      exec: { command: path.join(dir, "b", "bin", "get-token") },
    });
    assert.equal(doc.users[1].user.exec.command, "aws");
  });

  it("reads ~/.kube/config when KUBECONFIG is unset, and says where it looked when there is none", () => {
    const home = path.join(dir, "home");
    write("home/.kube/config", { "current-context": "h", contexts: [{ name: "h", context: { cluster: "c", user: "u" } }] });
    assert.equal(YAML.parse(loadKubeconfig(undefined, {}, home).text)["current-context"], "h");
    assert.throws(() => loadKubeconfig(undefined, {}, path.join(dir, "empty-home")), (e: CliError) =>
      e instanceof CliError && e.message.includes(`or put it at ${path.join(dir, "empty-home", ".kube", "config")}`));
  });

  it("refuses a missing --kubeconfig file, a list of only missing files, and a file that is not a kubeconfig, naming the file", () => {
    const missing = path.join(dir, "nope");
    assert.throws(() => loadKubeconfig(missing, { KUBECONFIG: "" }, dir), /^CliError: cannot read kubeconfig .*nope: .*no such file/);
    assert.throws(() => loadKubeconfig(undefined, { KUBECONFIG: `${missing}${path.delimiter}${missing}2` }, dir), /cannot read kubeconfig .*nope: /);
    fs.writeFileSync(path.join(dir, "list.yaml"), "- a\n- b\n");
    assert.throws(() => loadKubeconfig(path.join(dir, "list.yaml"), {}, dir), /kubeconfig: cannot be read \(.*list\.yaml: not a kubeconfig document\)/);
  });
});
