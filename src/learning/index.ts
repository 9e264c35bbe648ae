// The learning domain's face: decisions, their outcomes, and the confidence of the evidence they
// cited moving with what happened; the effectiveness and calibration reports.
import type { BehaviorApi } from '../behavior/index.js';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import type { TypedApi } from '../typed/index.js';
import { learningRoutes } from './routes.js';
import { DecisionRecordSchema, RefUpdateSchema } from './schemas.js';
import { LearningService } from './service.js';
import { learningSubjectData } from './subject-data.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const LEARNING_METHODS = ['recordDecision', 'recordOutcome', 'listOutcomes', 'effectiveness', 'calibration'] as const;

export type LearningApi = Pick<LearningService, (typeof LEARNING_METHODS)[number]>;

export function createLearningModule(
  runtime: Pick<Runtime, 'db'>,
  deps: {
    memory: Pick<MemoryApi, 'saveInTransaction' | 'confidences' | 'afterKeyedCommit'>;
    behavior: Pick<BehaviorApi, 'patternRefs' | 'predictionRefs' | 'applyOutcomeEvidence' | 'calibration'>;
    typed: Pick<TypedApi, 'observationIds'>;
  },
): DomainModule<LearningApi> {
  const learning = new LearningService(runtime.db, deps);
  return {
    name: 'learning',
    api: bindMethods(learning, LEARNING_METHODS),
    routes: async (app) => app.register(learningRoutes, { learning }),
    schemas: [DecisionRecordSchema, RefUpdateSchema],
    subjectData: learningSubjectData(runtime.db),
  };
}
