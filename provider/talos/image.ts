// PURE: Talos installer image names and the Talos version an installer image installs (its tag).
import { TalosError } from "./errors";
import { msg } from "./messages";
import { sameVersion, tryNormalizeVersion } from "../version";

export const GHCR_INSTALLER = "ghcr.io/siderolabs/installer";
export const FACTORY_HOST = "factory.talos.dev";

export interface InstallerImageOptions {
  /** Talos version, e.g. "v1.13.2" or "1.13.2". */
  version: string;
  /** Image Factory schematic ID (64 hex characters); without one, the classic ghcr.io installer is used. */
  schematic?: string;
  /** Platform for the `<platform>-installer` form (Talos >= 1.10 / Omni), e.g. "metal", "aws". */
  platform?: string;
  secureBoot?: boolean;
  /** Image Factory host, default factory.talos.dev. */
  factoryHost?: string;
}

/** The installer image reference for a version and optional schematic. */
export function installerImage(o: InstallerImageOptions): string {
  const version = tryNormalizeVersion(o.version);
  if (!version) throw new TalosError("TARGET_UNKNOWN", msg.badVersion(o.version));
  if (!o.schematic) return `${GHCR_INSTALLER}:${version}`;
  if (!/^[0-9a-f]{64}$/.test(o.schematic)) throw new TalosError("CONFIG", msg.badSchematic(o.schematic));
  const name = `${o.platform ? `${o.platform}-` : ""}installer${o.secureBoot ? "-secureboot" : ""}`;
  return `${o.factoryHost ?? FACTORY_HOST}/${name}/${o.schematic}:${version}`;
}

export interface ImageRef {
  /** Everything before the tag, e.g. "registry:5000/siderolabs/installer". */
  repository: string;
  tag?: string;
  /** "sha256:..." */
  digest?: string;
}

/** Splits an image reference; the tag is taken only if the last ':' comes after the last '/'. */
export function parseImageRef(ref: string): ImageRef {
  const text = ref.trim();
  if (!text || /\s/.test(text)) throw new TalosError("CONFIG", msg.badImageRef(ref));
  const at = text.indexOf("@");
  const name = at >= 0 ? text.slice(0, at) : text;
  const digest = at >= 0 ? text.slice(at + 1) : undefined;
  const colon = name.lastIndexOf(":");
  const slash = name.lastIndexOf("/");
  if (colon > slash) return { repository: name.slice(0, colon), tag: name.slice(colon + 1) || undefined, digest };
  return { repository: name, digest };
}

/** The Talos version an installer image installs (its tag), or undefined for a missing tag, `latest` or a non-version tag. */
export function versionFromImage(ref: string): string | undefined {
  const { tag } = parseImageRef(ref);
  if (!tag || tag === "latest") return undefined;
  return tryNormalizeVersion(tag);
}

/**
 * The version the node must report after installing `image`. An explicit version wins but must agree with a version
 * tag; without one, the tag must name a version (else a "target unknown" error asking for an explicit version).
 */
export function targetVersion(image: string, explicit?: string): string {
  const fromTag = versionFromImage(image);
  if (explicit !== undefined && explicit !== "") {
    const target = tryNormalizeVersion(explicit);
    if (!target) throw new TalosError("TARGET_UNKNOWN", msg.badVersion(explicit));
    if (fromTag && !sameVersion(fromTag, target)) throw new TalosError("CONFIG", msg.imageVersionMismatch(image, fromTag, target));
    return target;
  }
  if (!fromTag) throw new TalosError("TARGET_UNKNOWN", msg.targetUnknown(image));
  return fromTag;
}
