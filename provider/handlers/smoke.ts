// `Smoke`: the smallest real talos-gate resource. It proves the whole chain (typed SDK → serialized shim → handlers
// required by package name in the provider process) with no cluster: its output is a digest of its message.
import { createHash } from "node:crypto";
import type { Properties } from "./common";
import type { KindHandler } from "./registry";
import * as msg from "./messages";

function outputs(inputs: Properties, message: string): Properties {
  return { ...inputs, digest: createHash("sha256").update(message).digest("hex") };
}

/** Its one input (check refuses anything but a non-empty string). */
export const smokeHandler: KindHandler<string> = {
  parse: (inputs) => String(inputs.message ?? ""),
  async check(_olds, news) {
    if (typeof news.message !== "string" || news.message === "") {
      return { failures: [{ property: "message", reason: msg.smokeMessageRequired }] };
    }
    return { inputs: news };
  },
  async diff(_id, olds, news) {
    return { changes: olds.message !== news.message };
  },
  async create(message, inputs) {
    return { id: createHash("sha256").update(message).digest("hex").slice(0, 12), outs: outputs(inputs, message) };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, message, _olds, news) {
    return { outs: outputs(news, message) };
  },
  async delete() {},
};
