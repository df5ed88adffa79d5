CREATE TABLE "payloads" (
	"key" text PRIMARY KEY NOT NULL,
	"metadata" jsonb NOT NULL,
	"data" "bytea" NOT NULL,
	"bytes" integer NOT NULL,
	"workflow_id" text,
	"stored_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "payloads_workflow" ON "payloads" USING btree ("workflow_id");