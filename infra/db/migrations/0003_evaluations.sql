CREATE TABLE "evaluations" (
	"eval_id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"iteration" integer,
	"versions" jsonb NOT NULL,
	"episodes" integer NOT NULL,
	"success_rate" double precision NOT NULL,
	"mean_turns" double precision NOT NULL,
	"reward_by_agent" jsonb NOT NULL,
	"reward_by_agent_turn" jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "evaluations_run" ON "evaluations" USING btree ("run_id");--> statement-breakpoint
-- Evaluations recorded before the table: from their EvaluationFinished events.
INSERT INTO "evaluations" SELECT "data"->>'evalId', "data"->>'runId', ("data"->>'iteration')::integer, "data"->'versions', ("data"->>'episodes')::integer, ("data"->>'successRate')::double precision, ("data"->>'meanTurns')::double precision, "data"->'rewardByAgent', "data"->'rewardByAgentTurn' FROM "events" WHERE "type" = 'EvaluationFinished' ON CONFLICT DO NOTHING;
