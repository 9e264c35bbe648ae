// The pattern monitor's answers (SDK-WIRE.md 4.4: runMonitorTick, getMonitorStatus).
import { Type, type Static } from 'typebox';

export const TickReportSchema = Type.Object(
  {
    patternsChecked: Type.Integer({ description: 'Active patterns found overdue beyond their tolerance and not yet marked broken for that firing (at most MAX per tick)' }),
    patternsBroken: Type.Integer({ description: 'Of those, marked broken by this tick (metadata.broken, brokenAt, brokenFor: the missed firing)' }),
    breaksEmitted: Type.Integer({ description: 'pattern.broken events appended by this tick (one per pattern and missed firing: a repeat is not appended again)' }),
    durationMs: Type.Number(),
    capped: Type.Boolean({ description: 'More patterns were overdue than one tick takes; the next tick takes the rest' }),
    failures: Type.Array(Type.Object({ patternId: Type.String(), error: Type.String() }), { description: 'Patterns the tick could not mark or announce; the next tick tries them again' }),
  },
  { $id: 'MonitorTick', title: 'MonitorTick' },
);
export type TickReport = Static<typeof TickReportSchema>;

export const MonitorStatusSchema = Type.Object(
  {
    lastTickAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: "The project's last tick (called or scheduled); null before the first" }),
    lastTickDurationMs: Type.Union([Type.Number(), Type.Null()]),
    patternsDue: Type.Integer({ description: 'Active patterns overdue beyond their tolerance that the next tick will mark broken' }),
    activePatternCount: Type.Integer(),
  },
  { $id: 'MonitorStatus', title: 'MonitorStatus' },
);
export type MonitorStatus = Static<typeof MonitorStatusSchema>;
