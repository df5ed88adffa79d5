// Temporal histories to and from proto3 JSON, the format of `temporal workflow show --output json`.
//
// The SDK's own historyFromJSON/historyToJSON (@temporalio/common/lib/proto-utils) fail in this
// install with "type must be a Type": @temporalio/common and @temporalio/proto each get their own
// copy of protobufjs 8, and the protojson of one rejects the reflection types of the other. So
// this module takes protojson from the copy that built @temporalio/proto's types.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as Proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

export type History = Proto.temporal.api.history.v1.IHistory;

interface ProtoJson {
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  toJson(type: unknown, message: unknown): unknown;
}

const require = createRequire(import.meta.url);
// The CommonJS module itself: an ES namespace wrapper of it is not a protobufjs root.
const proto = require('@temporalio/proto') as typeof Proto;
const protoDir = dirname(require.resolve('@temporalio/proto'));
const protojson = require(require.resolve('protobufjs/ext/protojson', { paths: [protoDir] })) as ProtoJson;
// The generated types leave out the reflection root's lookupType.
const root = patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown };
const historyType = root.lookupType('temporal.api.history.v1.History');

/** Parses a proto3 JSON history; fields it does not know (a newer server's) are ignored. */
export function historyFromJson(json: unknown): History {
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}

/** Writes a history as proto3 JSON, indented, as the Temporal CLI does. */
export function historyToJson(history: History): string {
  const message = proto.temporal.api.history.v1.History.fromObject(history);
  return `${JSON.stringify(protojson.toJson(historyType, message), null, 2)}\n`;
}
