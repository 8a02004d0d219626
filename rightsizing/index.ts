// Public surface of the pure recommender.

export { isMaterialChange, relativeChange } from "./change.ts";
export type { CheckpointV1 } from "./checkpoint.ts";
export { decodeCheckpoint, encodeCheckpoint, parseCheckpoint, serializeCheckpoint } from "./checkpoint.ts";
export type { RecommenderConfig } from "./config.ts";
export { defaultConfig, withDefaults } from "./config.ts";
export { foldHistory } from "./fold.ts";
export { recommend } from "./recommend.ts";
export type { RecommenderState } from "./state.ts";
export { emptyState } from "./state.ts";
export type {
  Bounded,
  ContainerHistory,
  ContainerResources,
  OomEvent,
  ReasonCode,
  Recommendation,
  RecommendationStatus,
  RestartEvent,
  Result,
  UsageSample,
} from "./types.ts";
export { Reason } from "./types.ts";
