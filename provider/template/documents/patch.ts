// A config patch (inline or file), on a Cluster, a ControlPlane, Workers or a Machine document. Omni:
// client/pkg/template/internal/models/patch.go (siderolabs/omni b1ea5df, v1.10.0-beta).
import * as M from "../messages";
import { MultiError, type ErrNode } from "../errors";
import { readIncluded } from "../files";
import { parseObjects } from "../jobmanifest";
import type { RawPatch } from "../schema";
import type { Patch } from "../model";
import type { ParseOptions } from "../validate";
import { checkDescriptors, inlineText, labelsOf, type DocContext, type Seg } from "./context";

function validatePatch(ctx: DocContext, p: RawPatch, base: readonly Seg[], files: ParseOptions): { node?: ErrNode; model?: Patch } {
  const name = p.name || p.file || "";
  const list = new MultiError();
  for (const e of checkDescriptors(ctx, p, base)) list.add(e);
  let content: string | undefined;
  if (p.file && p.inline) list.add(ctx.leaf(M.patch.exclusive, base));
  else if (!p.file && !p.inline) list.add(ctx.leaf(M.patch.required, base));
  if (p.file) {
    const r = readIncluded(p.file, files, "openat");
    if (!r.ok) list.add(ctx.leaf(M.patch.failedToAccess(p.file, r.error), [...base, "file"]));
    else {
      content = r.text;
      const err = patchContentError(r.text);
      if (err) list.add(ctx.leaf(M.patch.invalidYaml(p.file, err), [...base, "file"]));
    }
  } else if (p.inline) {
    if (!p.name && !p.idOverride) list.add(ctx.leaf(M.patch.nameRequired, base));
    content = inlineText(p.inline);
    const err = patchContentError(content);
    if (err) list.add(ctx.leaf(M.patch.invalidInlineYaml(name, err), [...base, "inline"]));
  }
  if (!list.empty) return { node: list.wrapped(M.patch.wrap(name)) };
  const model: Patch = { name, content: content ?? "", ...labelsOf(p) };
  if (p.idOverride) model.idOverride = p.idOverride;
  if (p.file) model.file = p.file;
  return { model };
}

function patchContentError(text: string): string | undefined {
  try {
    const docs = parseObjects(text);
    if (docs.length === 0) return "config not found";
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export function validatePatches(ctx: DocContext, patches: RawPatch[] | undefined, base: readonly Seg[], files: ParseOptions, list: MultiError): Patch[] {
  const out: Patch[] = [];
  (patches ?? []).forEach((p, i) => {
    const r = validatePatch(ctx, p, [...base, i], files);
    list.add(r.node);
    if (r.model) out.push(r.model);
  });
  return out;
}
