CREATE TABLE "samples" (
	"sample_id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"iteration" integer NOT NULL,
	"episode_id" text NOT NULL,
	"turn" integer NOT NULL,
	"agent" text NOT NULL,
	"group_key" text NOT NULL,
	"policy" text NOT NULL,
	"policy_version" integer NOT NULL,
	"candidate" integer NOT NULL,
	"local" double precision NOT NULL,
	"global" double precision NOT NULL,
	"reward" double precision NOT NULL,
	"chosen" boolean NOT NULL,
	"advantage" double precision,
	"consumed_from_version" integer,
	"consumed_to_version" integer
);
--> statement-breakpoint
CREATE TABLE "streams" (
	"stream" text PRIMARY KEY NOT NULL,
	"position" integer NOT NULL,
	"hash" text
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "turn_groups" ADD COLUMN "position" integer;--> statement-breakpoint
ALTER TABLE "turn_groups" ADD COLUMN "state" jsonb;--> statement-breakpoint
ALTER TABLE "turn_groups" ADD COLUMN "handoff" jsonb;--> statement-breakpoint
ALTER TABLE "turn_groups" ADD COLUMN "prompt" jsonb;--> statement-breakpoint
CREATE INDEX "samples_episode" ON "samples" USING btree ("episode_id");--> statement-breakpoint
CREATE INDEX "samples_run" ON "samples" USING btree ("run_id","iteration");--> statement-breakpoint
CREATE INDEX "episodes_run" ON "episodes" USING btree ("run_id","iteration");--> statement-breakpoint
-- Streams recorded before the hash chain: their head position, with no hash (their rows have none).
INSERT INTO "streams" ("stream", "position", "hash") SELECT "stream", max("position"), NULL FROM "events" GROUP BY "stream";
