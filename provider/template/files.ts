// Files referenced by a template (patches, manifests, healthchecks), read through an injected reader so that this
// layer stays free of I/O. Relative paths resolve against the template's directory; nothing outside the allowed
// root (default: the template's directory) is read, symlinks included when a realPath function is given.
import { posix as path } from "node:path";
import { fileAccess as msg } from "./messages";

export interface FileOptions {
  /** Directory of the template file (relative paths resolve against it). Default ".". */
  baseDir?: string;
  /** Files must stay inside this directory. Default: baseDir. */
  allowedRoot?: string;
  /** Reads a file (absolute path) as bytes or text; errors carry Node's `code` (ENOENT, EACCES, ...). */
  readFile?: (absPath: string) => string | Uint8Array;
  /** Resolves symlinks (e.g. fs.realpathSync); when given, a link pointing outside the root is refused. */
  realPath?: (absPath: string) => string;
  /** Largest included file, in bytes (default 1 MiB). */
  maxFileBytes?: number;
}

export type FileResult = { ok: true; text: string; absPath: string } | { ok: false; error: string };

function osError(err: unknown): string {
  const code = (err as { code?: string } | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return msg.noSuchFile;
    case "EACCES":
    case "EPERM":
      return msg.permissionDenied;
    case "EISDIR":
      return msg.isDirectory;
    case "ENOTDIR":
      return msg.notDirectory;
    default:
      return (err as Error)?.message ?? String(err);
  }
}

function inside(root: string, p: string): string | undefined {
  const rel = path.relative(root, p);
  if (rel === ".." || rel.startsWith("../") || path.isAbsolute(rel)) return undefined;
  return rel === "" ? "." : rel;
}

/** Reads `file` as Omni would through its `--allowed-dir` root; `op` names the Go operation in error texts. */
export function readIncluded(file: string, opts: FileOptions, op: "statat" | "openat"): FileResult {
  const baseDir = path.normalize(opts.baseDir ?? ".");
  const root = path.normalize(opts.allowedRoot ?? baseDir);
  const abs = path.isAbsolute(file) ? path.normalize(file) : path.join(baseDir, file);
  // Go's os.Root names the path relative to the root in its errors.
  const relFromRoot = path.relative(path.isAbsolute(root) ? root : path.join("/", root), path.isAbsolute(abs) ? abs : path.join("/", abs));
  const shown = relFromRoot === "" ? "." : relFromRoot;
  if (inside(path.isAbsolute(root) ? root : path.join("/", root), path.isAbsolute(abs) ? abs : path.join("/", abs)) === undefined) {
    return { ok: false, error: msg.pathError(op, shown, msg.escapes) };
  }
  if (!opts.readFile) return { ok: false, error: msg.pathError(op, shown, msg.noReader) };
  if (opts.realPath) {
    try {
      const real = opts.realPath(abs);
      const realRoot = opts.realPath(root);
      if (inside(realRoot, real) === undefined) return { ok: false, error: msg.pathError(op, shown, msg.escapes) };
    } catch (err) {
      return { ok: false, error: msg.pathError(op, shown, osError(err)) };
    }
  }
  let data: string | Uint8Array;
  try {
    data = opts.readFile(abs);
  } catch (err) {
    return { ok: false, error: msg.pathError(op, shown, osError(err)) };
  }
  const limit = opts.maxFileBytes ?? 1024 * 1024;
  const size = typeof data === "string" ? new TextEncoder().encode(data).length : data.length;
  if (size > limit) return { ok: false, error: msg.pathError(op, shown, msg.tooLarge(size, limit)) };
  if (typeof data === "string") return { ok: true, text: data, absPath: abs };
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(data), absPath: abs };
  } catch {
    return { ok: true, text: new TextDecoder("utf-8").decode(data), absPath: abs };
  }
}
