// The Cluster document: name, Kubernetes and Talos versions, features, patches, manifests, healthchecks. Omni:
// client/pkg/template/internal/models/cluster.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import { MultiError, type ErrNode } from "../errors";
import { compareSemver, parseSemverTolerant } from "../formats";
import type { RawCluster } from "../schema";
import type { ClusterTemplate, Healthcheck, Manifest } from "../model";
import type { ParseOptions } from "../validate";
import { checkDescriptors, labelsOf, type DocContext, type Seg } from "./context";
import { validatePatches } from "./patch";
import { validateManifests } from "./kubernetesManifest";
import { validateHealthchecks } from "./kubernetesHealthcheck";

/** A valid Cluster document: the cluster's model and the manifests and healthchecks it holds. */
export interface ClusterParts {
  cluster: ClusterTemplate["cluster"];
  manifests: Manifest[];
  healthchecks: Healthcheck[];
}

function versionList(wrap: string, version: string | undefined, talos: boolean, ctx: DocContext, path: Seg[]): ErrNode | undefined {
  const l = new MultiError();
  if (!version) l.add(ctx.leaf(M.cluster.versionRequired, path));
  else {
    try {
      parseSemverTolerant(version);
    } catch (err) {
      l.add(ctx.leaf(M.cluster.versionSemver((err as Error).message), path));
    }
    if (talos && !version.startsWith("v")) l.add(ctx.leaf(M.cluster.versionV, path));
  }
  return l.wrapped(wrap);
}

export function validateCluster(ctx: DocContext, c: RawCluster, files: ParseOptions): { node?: ErrNode; model?: ClusterParts } {
  const name = c.name ?? "";
  const l = new MultiError();
  if (!name) l.add(ctx.leaf(M.cluster.nameRequired, ["name"]));
  else if (!/^[\p{L}\p{Nd}_-]+$/u.test(name)) l.add(ctx.leaf(M.cluster.nameChars, ["name"]));
  l.add(versionList(M.cluster.kubernetesVersionWrap, c.kubernetes?.version, false, ctx, ["kubernetes", "version"]));
  l.add(versionList(M.cluster.talosVersionWrap, c.talos?.version, true, ctx, ["talos", "version"]));
  if (c.features?.diskEncryption) {
    try {
      const v = parseSemverTolerant(c.talos?.version ?? "");
      if (compareSemver(v, parseSemverTolerant("1.5.0")) < 0) l.add(ctx.leaf(M.cluster.diskEncryption, ["features", "diskEncryption"]));
    } catch (err) {
      l.add(ctx.leaf((err as Error).message, ["talos", "version"]));
    }
  }
  for (const e of checkDescriptors(ctx, c, [])) l.add(e);
  const patches = validatePatches(ctx, c.patches, ["patches"], files, l);
  const man = validateManifests(ctx, name, c.kubernetes?.manifests ?? [], files);
  l.add(man.node);
  const hcs = validateHealthchecks(ctx, name, c.kubernetes?.healthchecks ?? [], files);
  l.add(hcs.node);
  if (!l.empty) return { node: l.wrapped(M.cluster.wrap(name)) };
  const f = c.features ?? {};
  const cluster: ClusterTemplate["cluster"] = {
    name,
    ...labelsOf(c),
    kubernetesVersion: c.kubernetes!.version!,
    talosVersion: c.talos!.version!,
    features: {
      diskEncryption: !!f.diskEncryption,
      enableWorkloadProxy: !!f.enableWorkloadProxy,
      useEmbeddedDiscoveryService: !!f.useEmbeddedDiscoveryService,
      disablePublicDiscoveryService: !!f.disablePublicDiscoveryService,
      enableNodeAuditSkip: !!f.enableNodeAuditSkip,
      ...(f.backupConfiguration?.interval && f.backupConfiguration.interval.ms > 0 ? { backupInterval: f.backupConfiguration.interval.text } : {}),
    },
    patches,
    ...(c.systemExtensions !== undefined ? { systemExtensions: c.systemExtensions } : {}),
    ...(c.kernelArgs !== undefined ? { kernelArgs: c.kernelArgs } : {}),
  };
  return { model: { cluster, manifests: man.models, healthchecks: hcs.models } };
}
