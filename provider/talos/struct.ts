// google.protobuf.Struct as protobufjs objects carry it ({ fields: { k: { stringValue: "…" } } }) to and from plain
// JSON values. Talos sends Kubernetes objects this way (StaticPodStatusSpec.pod_status, SingleManifest.object).

/** A JSON value (what a Struct holds). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// protobufjs' object form of google.protobuf.Value / Struct / ListValue: the oneof member that is set
interface PbValue {
  nullValue?: unknown; numberValue?: number; stringValue?: string; boolValue?: boolean;
  structValue?: PbStruct; listValue?: { values?: PbValue[] };
}
export interface PbStruct { fields?: Record<string, PbValue> }

function fromValue(v: PbValue | undefined): Json {
  if (!v) return null;
  if (v.structValue !== undefined) return fromStruct(v.structValue);
  if (v.listValue !== undefined) return (v.listValue.values ?? []).map(fromValue);
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.numberValue !== undefined) return v.numberValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return null;
}

/** A decoded Struct as a plain object. */
export function fromStruct(s: PbStruct | null | undefined): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(s?.fields ?? {})) out[k] = fromValue(v);
  return out;
}

function toValue(j: unknown): PbValue {
  if (j === null || j === undefined) return { nullValue: 0 };
  if (typeof j === "string") return { stringValue: j };
  if (typeof j === "number") return { numberValue: j };
  if (typeof j === "boolean") return { boolValue: j };
  if (Array.isArray(j)) return { listValue: { values: j.map(toValue) } };
  return { structValue: toStruct(j as Record<string, unknown>) };
}

/** A plain object as a Struct for encoding (undefined fields are left out, as JSON does). */
export function toStruct(o: Record<string, unknown>): PbStruct {
  const fields: Record<string, PbValue> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) fields[k] = toValue(v);
  return { fields };
}
