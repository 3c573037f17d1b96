// PURE: Talos installer image names (vanilla, Image Factory, per node like Omni) and the Talos version an installer
// image installs (its tag).
import type { NodeImageFacts } from "../rollout/ports";
import { TalosError } from "./errors";
import { msg } from "./messages";
import { compareVersions, sameVersion, tryNormalizeVersion } from "../version";

export const GHCR_INSTALLER = "ghcr.io/siderolabs/installer";
export const FACTORY_HOST = "factory.talos.dev";
/**
 * Image Factory's schematic without customization (sha256 of `customization: {}\n`), the id Omni records for a
 * machine installed bypassing Image Factory with no extensions (omni internal/backend/runtime/omni/controllers/omni/
 * internal/talos/schematic.go GetSchematicInfo synthesizes it; Omni adds its own kernel args, talos-gate none).
 */
export const DEFAULT_SCHEMATIC = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
/** An Image Factory installer reference: `<factory>/[<platform>-]installer[-secureboot]/<schematic>[:tag]`. */
const FACTORY_INSTALLER = /^(.+)\/(?:[a-z0-9]+-)?installer(?:-secureboot)?\/[0-9a-f]{64}$/;
/** What an Image Factory host input may look like: a registry host (port, path prefix), no scheme, no tag. */
const FACTORY_HOST_FORM = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?(\/[a-z0-9._-]+)*$/i;

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

/** What the user chose explicitly; each choice wins over what the node reports. */
export interface InstallerChoice {
  /** One installer image for every node, used as is. */
  installerImage?: string;
  /** One Image Factory schematic for every node, instead of each node's own. */
  schematic?: string;
  /** Image Factory host for every node; default: the host of the node's own install image, else factory.talos.dev. */
  factoryHost?: string;
}

/** The Image Factory host (with any port and path prefix) of an installer image from Image Factory, else undefined. */
export function factoryHostOf(image: string | undefined): string | undefined {
  if (!image) return undefined;
  try {
    return FACTORY_INSTALLER.exec(parseImageRef(image).repository)?.[1];
  } catch {
    return undefined;
  }
}

/** Checks an Image Factory host input (`factory.example.com`, `registry:5000/factory`). */
export function checkFactoryHost(host: string): string {
  if (!FACTORY_HOST_FORM.test(host)) throw new TalosError("CONFIG", msg.badFactoryHost(host));
  return host;
}

/** Talos from which Image Factory installer names carry the platform (`metal-installer`); Omni's rule. */
const PLATFORM_PREFIX_SINCE = "v1.10.0";

/**
 * The installer image for upgrading `node` to `target`, as Omni builds it (internal/backend/installimage): an
 * explicit installer image wins; otherwise the schematic (explicit, else the node's own) gives
 * `<factory>/<platform>-installer[-secureboot]/<schematic>:<target>` — no `<platform>-` below Talos 1.10. The factory
 * is the explicit host, else the host of the node's own install image when that came from an Image Factory (a
 * private factory), else factory.talos.dev. A node without a schematic gets what Omni gives it: from Talos 1.10 on a
 * platform other than metal, the default schematic's `<platform>-installer` (its platform's installer); otherwise the
 * vanilla `ghcr.io/siderolabs/installer:<target>` (the same as the metal installer of the default schematic).
 * Stricter than Omni: a node that runs extensions without a schematic (installed bypassing Image Factory) is
 * refused, because the vanilla installer would silently drop its extensions; so is a SecureBoot node without one
 * (Omni gives it Image Factory's installer-secureboot of a synthesized schematic, signed with Sidero Labs' key: not
 * the key an image built outside Image Factory was signed with, so the node would not boot the new version).
 */
export function nodeInstallerImage(node: string, target: string, facts: NodeImageFacts, choice: InstallerChoice = {}): string {
  const version = tryNormalizeVersion(target);
  if (!version) throw new TalosError("TARGET_UNKNOWN", msg.badVersion(target));
  if (choice.installerImage) {
    parseImageRef(choice.installerImage);
    return choice.installerImage;
  }
  let schematic = choice.schematic || facts.schematic;
  if (!schematic) {
    if (facts.extensions.length) throw new TalosError("CONFIG", msg.extensionsWithoutSchematic(node, facts.extensions), node);
    // Image Factory puts the schematic extension into every image it builds (image-factory internal/profile/profile.go,
    // 26b95ca: appended unconditionally, the empty schematic too): a SecureBoot node without one booted an image signed
    // with a key of its own (imager), which neither the vanilla installer nor Image Factory's signed one boots.
    if (facts.secureBoot) throw new TalosError("CONFIG", msg.secureBootWithoutSchematic(node), node);
    const platformInstaller = !!facts.platform && facts.platform !== "metal" && compareVersions(version, PLATFORM_PREFIX_SINCE) >= 0;
    if (!platformInstaller) return `${GHCR_INSTALLER}:${version}`;
    schematic = DEFAULT_SCHEMATIC;
  }
  if (!/^[0-9a-f]{64}$/.test(schematic)) throw new TalosError("CONFIG", msg.badSchematic(schematic));
  let name = facts.secureBoot ? "installer-secureboot" : "installer";
  if (compareVersions(version, PLATFORM_PREFIX_SINCE) >= 0) {
    if (!facts.platform) throw new TalosError("CONFIG", msg.noPlatform(node), node);
    name = `${facts.platform}-${name}`;
  }
  return `${choice.factoryHost || facts.factoryHost || FACTORY_HOST}/${name}/${schematic}:${version}`;
}
