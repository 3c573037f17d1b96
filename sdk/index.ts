// talos-gate: typed Pulumi resources for healthcheck-gated Talos upgrades.
export { Smoke, SmokeArgs } from "./smoke";
