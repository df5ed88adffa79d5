CREATE TABLE "checkpoints" (
	"run_id" text NOT NULL,
	"policy" text NOT NULL,
	"version" integer NOT NULL,
	"iteration" integer NOT NULL,
	"path" text NOT NULL,
	CONSTRAINT "checkpoints_run_id_policy_version_pk" PRIMARY KEY("run_id","policy","version")
);
--> statement-breakpoint
CREATE TABLE "episodes" (
	"episode_id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"iteration" integer NOT NULL,
	"problem_seed" integer NOT NULL,
	"status" text NOT NULL,
	"success" boolean,
	"turns" integer,
	"reward_by_agent" jsonb
);
--> statement-breakpoint
CREATE TABLE "events" (
	"global_position" bigserial PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"stream" text NOT NULL,
	"position" integer NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_event_id_unique" UNIQUE("event_id"),
	CONSTRAINT "events_stream_position" UNIQUE("stream","position")
);
--> statement-breakpoint
CREATE TABLE "iterations" (
	"run_id" text NOT NULL,
	"iteration" integer NOT NULL,
	"episodes" integer NOT NULL,
	"success_rate" double precision NOT NULL,
	"reward_by_agent" jsonb NOT NULL,
	CONSTRAINT "iterations_run_id_iteration_pk" PRIMARY KEY("run_id","iteration")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"config" jsonb NOT NULL,
	"status" text NOT NULL,
	"total_iterations" integer NOT NULL,
	"iterations_done" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "turn_groups" (
	"episode_id" text NOT NULL,
	"turn" integer NOT NULL,
	"agent" text NOT NULL,
	"run_id" text NOT NULL,
	"iteration" integer NOT NULL,
	"group_key" text NOT NULL,
	"policy" text NOT NULL,
	"policy_version" integer NOT NULL,
	"samples" jsonb NOT NULL,
	"chosen" integer NOT NULL,
	CONSTRAINT "turn_groups_episode_id_turn_agent_pk" PRIMARY KEY("episode_id","turn","agent")
);
--> statement-breakpoint
CREATE TABLE "updates" (
	"run_id" text NOT NULL,
	"policy" text NOT NULL,
	"iteration" integer NOT NULL,
	"from_version" integer NOT NULL,
	"to_version" integer NOT NULL,
	"samples" integer NOT NULL,
	"groups" integer NOT NULL,
	"loss" double precision,
	"metrics" jsonb NOT NULL,
	CONSTRAINT "updates_run_id_policy_iteration_pk" PRIMARY KEY("run_id","policy","iteration")
);
