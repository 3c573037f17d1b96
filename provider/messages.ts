// Messages of the package as a whole (what any entry point says before its own layer is loaded).
export const packageJsonMissing = (from: string) =>
  `talos-gate: cannot find its package.json (name "talos-gate") in ${from} or above; reinstall the talos-gate package`;

export const nodeTooOld = (minimum: string, version: string, executable: string) =>
  `talos-gate needs Node.js ${minimum} or newer, but ${executable} is Node.js ${version}: install Node.js 22 LTS (or newer) ` +
  `and put it first on PATH (Pulumi runs your program and the talos-gate provider with the \`node\` found on PATH)`;
export const enginesRangeUnsupported = (range: string) =>
  `talos-gate: package.json engines.node must read ">=X.Y.Z", got ${JSON.stringify(range)}`;
