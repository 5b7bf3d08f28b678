import type { Analysis, GatherPlan, MergePlan, RefusedPlan, SchemaInfo } from "./analysis.js";

export function planMerge(_analysis: Analysis, _schema: SchemaInfo): MergePlan {
  throw new Error("not yet");
}
export function planGather(_analysis: Analysis, _schema: SchemaInfo): GatherPlan | RefusedPlan {
  throw new Error("not yet");
}
