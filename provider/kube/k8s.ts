// @kubernetes/client-node as talos-gate loads it: from the one-file bundle the build writes (dist/vendor/client-node.js,
// scripts/bundle.ts), not from the package's ESM build. Loading the ESM build links ~900 modules and costs ~1.5
// CPU-seconds in every process that talks to Kubernetes — every provider process the engine starts for a preview or
// an update, every `talos-gate` command; the bundle loads in ~0.5 s (`node -e 'require("./dist/provider/kube")'`,
// measured on the 2-core machine). Same library, same version (the devDependency it is built from); its license
// travels beside it (dist/vendor/client-node.LICENSE).
// Types come from the package itself; the runtime values talos-gate uses are listed here, so a new one is added once.
import type * as Lib from "@kubernetes/client-node";

export type * from "@kubernetes/client-node";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is a build output, not a package
const lib = require("../../vendor/client-node.js") as typeof Lib;

export const KubeConfig = lib.KubeConfig;
export type KubeConfig = Lib.KubeConfig;
export const CoreV1Api = lib.CoreV1Api;
export type CoreV1Api = Lib.CoreV1Api;
export const BatchV1Api = lib.BatchV1Api;
export type BatchV1Api = Lib.BatchV1Api;
export const PolicyV1Api = lib.PolicyV1Api;
export type PolicyV1Api = Lib.PolicyV1Api;
export const CoordinationV1Api = lib.CoordinationV1Api;
export type CoordinationV1Api = Lib.CoordinationV1Api;
export const VersionApi = lib.VersionApi;
export type VersionApi = Lib.VersionApi;
export const KubernetesObjectApi = lib.KubernetesObjectApi;
export type KubernetesObjectApi = Lib.KubernetesObjectApi;
export const Watch = lib.Watch;
export type Watch = Lib.Watch;
export const ApiException = lib.ApiException;
export type ApiException<T> = Lib.ApiException<T>;
export const ServerConfiguration = lib.ServerConfiguration;
export type ServerConfiguration<T extends { [key: string]: string }> = Lib.ServerConfiguration<T>;
export const V1MicroTime = lib.V1MicroTime;
export type V1MicroTime = Lib.V1MicroTime;
export const PatchStrategy = lib.PatchStrategy;
export type PatchStrategy = Lib.PatchStrategy;
export const HttpMethod = lib.HttpMethod;
export type HttpMethod = Lib.HttpMethod;
export const createConfiguration = lib.createConfiguration;
export const setHeaderOptions = lib.setHeaderOptions;
