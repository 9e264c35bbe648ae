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

export type LearningApi = Pick<LearningService, 'recordDecision' | 'recordOutcome' | 'listOutcomes' | 'effectiveness' | 'calibration'>;

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
    api: bindMethods(learning, ['recordDecision', 'recordOutcome', 'listOutcomes', 'effectiveness', 'calibration']),
    routes: async (app) => app.register(learningRoutes, { learning }),
    schemas: [DecisionRecordSchema, RefUpdateSchema],
    subjectData: learningSubjectData(runtime.db),
  };
}
