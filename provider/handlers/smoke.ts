// `Smoke`: the smallest real talos-gate resource. It proves the whole chain (typed SDK → serialized shim → handlers
// required by package name in the provider process) with no cluster: its output is a digest of its message.
import { createHash } from "node:crypto";
import type { KindHandler } from "./registry";

type Props = Record<string, any>;

function outputs(inputs: Props): Props {
  const message = String(inputs.message ?? "");
  return { ...inputs, digest: createHash("sha256").update(message).digest("hex") };
}

export const smokeHandler: KindHandler = {
  async check(_olds, news) {
    if (typeof news.message !== "string" || news.message === "") {
      return { failures: [{ property: "message", reason: "message is required and must be a non-empty string" }] };
    }
    return { inputs: news };
  },
  async diff(_id, olds, news) {
    return { changes: olds.message !== news.message };
  },
  async create(inputs) {
    return { id: createHash("sha256").update(String(inputs.message)).digest("hex").slice(0, 12), outs: outputs(inputs) };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, _olds, news) {
    return { outs: outputs(news) };
  },
  async delete() {},
};
