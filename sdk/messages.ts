// Every message the SDK itself shows (in the program, on the resource's row).

/** replaceOnChanges on a TalosUpgrade (issue 22.8): the engine would replace it, which changes nothing a rollout does. */
export const replaceOnChangesNoEffect = (name: string, paths: readonly string[]) =>
  `replaceOnChanges (${paths.join(", ")}) has no effect on TalosUpgrade "${name}": a replacement runs the same rollout ` +
  "as an update, and deleting the old resource never downgrades a node; remove the option";
