import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

/** A JSON Schema (draft 2020-12), as OpenAPI 3.1 takes it. */
export type JsonSchema = { [keyword: string]: unknown };

/** Which side of a call a schema describes: what the server reads (before transforms), or what it writes. */
export type SchemaSide = 'input' | 'output';

export function componentRef(name: string): string {
  return `#/components/schemas/${name}`;
}

/** zod's name for the recursive schemas it found no name for; they go to `$defs` under it. */
const unnamedGroup = '__shared';
const unnamedRefPrefix = `${componentRef(unnamedGroup)}#/$defs/`;
const jsonValueName = 'JsonValue';
const jsonValueTypes = ['string', 'number', 'boolean', 'null', 'array', 'object'];
const anyJsonValue: JsonSchema = { description: 'Any JSON value: a string, number, boolean, null, or an array or object of JSON values.' };

/** Turns zod schemas into JSON Schemas that refer to the named ones as `#/components/schemas/<name>`. */
export interface SchemaConverter {
  /** The named schemas themselves, for components.schemas. */
  components(): Record<string, JsonSchema>;
  /** One schema: a reference when it is a named one, else written out (referring to named ones inside). */
  convert(schema: z.ZodType): JsonSchema;
}

export function createSchemaConverter(named: Readonly<Record<string, z.ZodType>>, side: SchemaSide): SchemaConverter {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const convertAll = () => tidy(z.toJSONSchema(registry, { target: 'draft-2020-12', io: side, uri: componentRef }).schemas, named);
  return {
    components: convertAll,
    convert(schema) {
      const name = registry.get(schema)?.id;
      if (name) return { $ref: componentRef(name) };
      const id = '(converted)';
      registry.add(schema, { id });
      try {
        return convertAll()[id]!;
      } finally {
        registry.remove(schema);
      }
    },
  };
}

/**
 * Makes zod's output fit inside an OpenAPI document: no `$schema`/`$id` on each schema (the document
 * sets the dialect), and no `__shared` group. The only recursive schema in this API is a JSON value
 * (z.json(), written afresh wherever it is used); each unnamed one becomes a reference to JsonValue.
 * Any other unnamed recursion stops the build: it needs a name in named-schemas.ts.
 */
function tidy(schemas: Record<string, JsonSchema>, named: Readonly<Record<string, z.ZodType>>): Record<string, JsonSchema> {
  const { [unnamedGroup]: unnamed, ...rest } = schemas;
  const unnamedDefs = (unnamed?.$defs ?? {}) as Record<string, JsonSchema>;
  for (const [id, schema] of Object.entries(unnamedDefs)) {
    if (!isJsonValue(schema)) throw new Error(`a recursive schema (${id}) has no name: add it to named-schemas.ts`);
  }
  if (Object.keys(unnamedDefs).length && !(jsonValueName in named)) throw new Error(`${jsonValueName} must be a named schema`);
  const result: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(rest)) {
    const { $schema: _dialect, $id: _id, ...body } = schema;
    result[name] = renameUnnamedRefs(body) as JsonSchema;
  }
  // Written as any JSON value rather than as the recursion zod gives: code generators (openapi-typescript)
  // turn a self-referencing union into a TypeScript type that refers to itself and does not compile.
  if (jsonValueName in result) result[jsonValueName] = anyJsonValue;
  return result;
}

function isJsonValue(schema: JsonSchema): boolean {
  const options = schema.anyOf;
  return Array.isArray(options) && isDeepStrictEqual(options.map((option: JsonSchema) => option.type), jsonValueTypes);
}

function renameUnnamedRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renameUnnamedRefs);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' && inner.startsWith(unnamedRefPrefix) ? componentRef(jsonValueName) : renameUnnamedRefs(inner),
    ]),
  );
}

/** Adds `more` to `into`; the same name twice must be the same schema (requests and responses both name some). */
export function mergeComponents(into: Record<string, JsonSchema>, more: Record<string, JsonSchema>): void {
  for (const [name, schema] of Object.entries(more)) {
    if (name in into && !isDeepStrictEqual(into[name], schema)) throw new Error(`components.schemas.${name} differs between requests and responses`);
    into[name] = schema;
  }
}
