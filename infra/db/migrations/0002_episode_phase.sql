ALTER TABLE "episodes" ADD COLUMN "phase" text DEFAULT 'train' NOT NULL;--> statement-breakpoint
-- Evaluation episodes recorded before the column: their phase is in their EpisodeStarted event.
UPDATE "episodes" SET "phase" = 'eval' FROM "events" WHERE "events"."type" = 'EpisodeStarted' AND "events"."stream" = 'episode:' || "episodes"."episode_id" AND "events"."data"->>'phase' = 'eval';
