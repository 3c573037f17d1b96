// The Cluster document's kubernetes.manifests: name, mode, inline xor file, objects, no duplicate. Omni:
// client/pkg/template/internal/models/kubernetes_manifest.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import { MultiError, join, type ErrNode } from "../errors";
import { readIncluded } from "../files";
import { checkManifestObjects } from "../jobmanifest";
import { runnerId } from "../ids";
import type { RawManifest } from "../schema";
import type { ContentSource, Manifest } from "../model";
import type { ParseOptions } from "../validate";
import { checkDescriptors, inlineText, labelsOf, type DocContext } from "./context";

export function validateManifests(ctx: DocContext, cluster: string, manifests: RawManifest[], files: ParseOptions): { node?: ErrNode; models: Manifest[] } {
  const entries: (ErrNode | undefined)[] = [];
  const seen = new Set<string>();
  const models: Manifest[] = [];
  manifests.forEach((m, i) => {
    const base = ["kubernetes", "manifests", i];
    const name = m.name || m.file || "";
    const errs: ErrNode[] = [];
    if (!m.name && !m.file) errs.push(ctx.leaf(M.manifest.nameEmpty, base));
    if (!m.mode) errs.push(ctx.leaf(M.manifest.modeNotSet(name), base));
    if (m.file && m.inline) errs.push(ctx.leaf(M.manifest.exclusive, base));
    else if (!m.file && !m.inline) errs.push(ctx.leaf(M.manifest.required, base));
    const desc = new MultiError();
    for (const e of checkDescriptors(ctx, m, base)) desc.add(e);
    const d = desc.wrapped(M.manifest.descriptorsWrap(name));
    if (d) errs.push(d);
    let text: string | undefined;
    let source: ContentSource | undefined;
    if (m.file && !m.inline) {
      const r = readIncluded(m.file, files, "statat");
      if (!r.ok) errs.push(ctx.leaf(M.manifest.failedToAccess(m.file, r.error), [...base, "file"]));
      else {
        text = r.text;
        source = { type: "file", file: m.file, path: r.absPath };
      }
    } else if (m.inline && !m.file) {
      text = inlineText(m.inline);
      source = { type: "inline", form: m.inline.form };
    }
    let objects: Record<string, unknown>[] | undefined;
    if (text !== undefined && name !== "") {
      const r = checkManifestObjects(name, text);
      for (const e of r.errors) errs.push(ctx.leaf(e, [...base, m.file ? "file" : "inline"]));
      objects = r.objects;
    }
    if (errs.length > 0) {
      entries.push(join(errs));
      return;
    }
    if (seen.has(name)) {
      entries.push(ctx.leaf(M.manifest.duplicate(name), base));
      return;
    }
    seen.add(name);
    models.push({
      name,
      id: `${String(200 + i).padStart(3, "0")}-${runnerId(cluster, name)}`,
      mode: m.mode!,
      source: source!,
      text: text!,
      objects: objects ?? [],
      ...labelsOf(m),
    });
  });
  return { node: join(entries), models };
}
