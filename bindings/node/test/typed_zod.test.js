'use strict';
// Typed tools from zod schemas (issue 11): the JSON Schema the model sees,
// parsed arguments with defaults, refinements answered as error results,
// misuse refused at registration. Run by `node --test` like the others.
const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { Runtime } = require('..');

async function withRuntime(fn) {
  const rt = new Runtime({});
  try {
    await fn(rt);
  } finally {
    await rt.close();
    assert.equal(rt.liveHandles, 0, 'every registration was released');
  }
}

const Weather = z
  .object({
    city: z.string().min(1).describe('City name'),
    days: z.number().int().min(1).max(7).default(3),
    unit: z.enum(['c', 'f']).optional(),
  })
  .refine((a) => a.city !== 'Atlantis', { message: 'no such city' });

test('the model gets the zod schema as JSON Schema', () =>
  withRuntime(async (rt) => {
    assert.equal(
      rt.typedTool('weather', { schema: Weather, toolset: 'demo', description: 'Forecast' }, () => 'x'),
      'weather',
    );
    const [def] = await rt.definitions({ enabledToolsets: ['demo'] });
    const p = def.function.parameters;
    assert.equal(def.function.name, 'weather');
    assert.equal(def.function.description, 'Forecast');
    assert.equal(p.type, 'object');
    assert.deepEqual(p.required, ['city']);
    assert.equal(p.properties.city.description, 'City name');
    assert.deepEqual(p.properties.unit.enum, ['c', 'f']);
    assert.equal(p.properties.days.maximum, 7);
    assert.equal(p.$schema, undefined);
  }));

test('the handler gets parsed, defaulted arguments', () =>
  withRuntime(async (rt) => {
    let seen = null;
    rt.typedTool('weather', { schema: Weather }, async (args) => {
      seen = args;
      return { city: args.city, days: args.days };
    });
    const out = JSON.parse(await rt.dispatch('weather', { city: 'Oslo' }));
    assert.deepEqual(out, { city: 'Oslo', days: 3 });
    assert.deepEqual(seen, { city: 'Oslo', days: 3 });
  }));

test('a refinement the JSON Schema cannot express is an error result', () =>
  withRuntime(async (rt) => {
    let called = false;
    rt.typedTool('weather', { schema: Weather }, () => {
      called = true;
      return 'sunny';
    });
    const text = await rt.dispatch('weather', { city: 'Atlantis' });
    assert.match(text, /invalid arguments for weather: no such city/);
    assert.doesNotMatch(text, /\n/);
    assert.equal(called, false, 'the handler was not called');
    // The JSON Schema part is the library's: a wrong type never reaches zod.
    const bad = await rt.dispatch('weather', { city: 'Oslo', days: 99 });
    assert.match(bad, /days/);
    assert.equal(called, false);
  }));

test('transforms run and a throwing handler is an error result', () =>
  withRuntime(async (rt) => {
    const S = z.object({ word: z.string().transform((w) => w.toUpperCase()) });
    rt.typedTool('shout', { schema: S }, ({ word }) => word);
    assert.equal(await rt.dispatch('shout', { word: 'hi' }), 'HI');
    rt.typedTool('boom', { schema: z.object({}) }, () => {
      throw new Error('it broke');
    });
    assert.match(await rt.dispatch('boom', {}), /it broke/);
  }));

test('misuse is refused at registration', () =>
  withRuntime(async (rt) => {
    assert.throws(() => rt.typedTool('t', {}, () => 1), TypeError);
    assert.throws(() => rt.typedTool('t', { schema: { type: 'object' } }, () => 1), /zod schema/);
    assert.throws(() => rt.typedTool('t', { schema: z.string() }, () => 1), /object schema/);
    assert.throws(() => rt.typedTool('t', { schema: z.object({}) }, 'nope'), TypeError);
    assert.throws(
      () => rt.typedTool('t', { schema: z.object({}), parameters: { type: 'object' } }, () => 1),
      /not def.parameters/,
    );
    assert.throws(() => rt.typedTool('', { schema: z.object({}) }, () => 1), TypeError);
    // A custom converter (zod 3 with zod-to-json-schema, say) is used when given.
    const legacy = { safeParse: (d) => ({ success: true, data: d }) };
    rt.typedTool('legacy', { schema: legacy, toJSONSchema: () => ({ type: 'object', properties: { a: { type: 'string' } } }) }, (a) => a);
    assert.deepEqual(JSON.parse(await rt.dispatch('legacy', { a: 'x' })), { a: 'x' });
  }));
