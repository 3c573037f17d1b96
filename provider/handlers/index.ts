// Entry point the serialized shim (provider/shim.ts) requires by package name. Dispatches each Pulumi call to the
// handler of the resource kind named in the `kind` property (inputs on check/create, old outputs elsewhere). Every
// operation is tracked, so the host can stop and exit when the Pulumi engine cancels or is gone (engine.ts).
// First: an unsupported Node.js (the `node` on PATH that runs the provider) stops here, naming the version needed.
import "../nodeSupport";
import type * as pulumi from "@pulumi/pulumi";
import { tracked } from "./engine";
import * as msg from "./messages";
import type { Properties as Props } from "./common";
import { kindHandlers, KindMethods } from "./registry";

function handlerFor(...bags: (Props | undefined)[]): KindMethods {
  const kind = bags.map((b) => b?.kind).find((k) => typeof k === "string") as string | undefined;
  const h = kind && Object.hasOwn(kindHandlers, kind) ? kindHandlers[kind] : undefined;
  if (!h) {
    throw new Error(msg.unknownKind(kind));
  }
  return h;
}

// async: an unknown kind rejects the returned promise like every other failure, instead of throwing synchronously.
export async function check(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
  return tracked(() => handlerFor(news, olds).check(olds, news));
}
export async function diff(id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
  return tracked(() => handlerFor(news, olds).diff(id, olds, news));
}
export async function create(inputs: Props): Promise<pulumi.dynamic.CreateResult> {
  return tracked(() => handlerFor(inputs).create(inputs));
}
export async function read(id: string, props: Props): Promise<pulumi.dynamic.ReadResult> {
  return tracked(() => handlerFor(props).read(id, props));
}
export async function update(id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult> {
  return tracked(() => handlerFor(news, olds).update(id, olds, news));
}
export async function delete_(id: string, props: Props): Promise<void> {
  return tracked(() => handlerFor(props).delete(id, props));
}
export { delete_ as delete };
