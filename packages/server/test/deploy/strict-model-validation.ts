/**
 * A kubernetes-models object validated as `kubectl apply --validate=strict` does: its own
 * validator (the API's OpenAPI definitions compiled by Ajv) finds wrong types, missing required
 * fields and values outside an enum, and the fields it does not know are found here, since the
 * definitions never say that an object takes no others.
 *
 * A compiled validator reads each property its schema names, whether the object has it or not,
 * and each key of a map it checks; it reads no other. So the validator runs on a view of the
 * object that records what it reads: an own field of an object the validator read from, never read
 * itself, is unknown. An object it read nothing from has no properties in its schema (an open one,
 * such as a field kept as raw JSON), and is left as it is.
 */

/** A kubernetes-models class: `new Deployment(data)`, its apiVersion and kind, a validate() that throws. */
export interface ModelClass {
  new (data: never): { validate(): void };
  apiVersion: string;
  kind: string;
}

interface AjvError {
  instancePath: string;
  message?: string;
  params: unknown;
}

/** Every refusal, as `<JSON pointer> <message> <params>`; none when the object is valid. */
export function strictModelErrors(Model: ModelClass, object: object): string[] {
  // The model's constructor copies the data: what is watched below is the model's own copy.
  const model = new Model(object as never);
  const reads = new WeakMap<object, Set<PropertyKey>>();
  const views = new WeakMap<object, object>();
  const view = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    let proxy = views.get(value);
    if (!proxy) {
      const read = new Set<PropertyKey>();
      reads.set(value, read);
      proxy = new Proxy(value, {
        get(target, key) {
          read.add(key);
          return view(Reflect.get(target, key));
        },
      });
      views.set(value, proxy);
    }
    return proxy;
  };

  const errors: string[] = [];
  try {
    model.validate.call(view(model));
  } catch (error) {
    const found = (error as { errors?: AjvError[] }).errors;
    if (!found) throw error;
    for (const e of found) errors.push(`${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }

  const visit = (value: unknown, at: string) => {
    if (value === null || typeof value !== 'object') return;
    const read = reads.get(value);
    if (!read || read.size === 0) return;
    for (const [key, child] of Object.entries(value)) {
      if (Array.isArray(value) || read.has(key))
        visit(child, `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      else
        errors.push(
          `${at} must NOT have additional properties ${JSON.stringify({ additionalProperty: key })}`,
        );
    }
  };
  visit(model, '');
  return errors;
}
