/**
 * How the original service (Starlette 0.25 with python-multipart 0.0.6) reads the upload
 * endpoint's form: by the Content-Type header, as python-multipart's `parse_options_header` cuts
 * it, a multipart body (which needs a `boundary` parameter), a URL-encoded one, or none at all:
 * any other body (JSON, text, no Content-Type) is an empty form, so `image_files` is missing.
 */
export type FormKind = 'multipart' | 'multipart without boundary' | 'urlencoded' | 'none';

/** Python's `bytes.strip()` whitespace. */
const ASCII_WHITESPACE = /^[\t-\r ]+|[\t-\r ]+$/g;
/** python-multipart's OPTION_RE: `; name = value` where value is a token or a quoted string. */
const OPTION =
  /(?:;|^)[\t-\r ]*([^()<>@,;:\\"/[\]?={} \t]+)[\t-\r ]*=[\t-\r ]*([^()<>@,;:\\"/[\]?={} \t]+|"(?:\\.|[^"])*")/g;

export function formKind(contentType: string | undefined): FormKind {
  if (!contentType) return 'none';
  const semicolon = contentType.indexOf(';');
  // Without parameters the type is lower-cased and stripped; with them it is compared as sent.
  const type =
    semicolon === -1
      ? contentType.toLowerCase().replace(ASCII_WHITESPACE, '')
      : contentType.slice(0, semicolon);
  if (type === 'application/x-www-form-urlencoded') return 'urlencoded';
  if (type !== 'multipart/form-data') return 'none';
  const parameters = semicolon === -1 ? '' : contentType.slice(semicolon + 1);
  for (const [, name] of parameters.matchAll(OPTION)) {
    if (name!.toLowerCase() === 'boundary') return 'multipart';
  }
  return 'multipart without boundary';
}

/**
 * The names of the fields of a URL-encoded body, as python-multipart's QuerystringParser splits it
 * (fields end at `&`, or at `;` when no `&` follows; a trailing name without `=` is dropped) and
 * Starlette unquotes them (`unquote_plus`).
 */
export function urlencodedFieldNames(body: Buffer): string[] {
  const data = body.toString('latin1');
  const names: string[] = [];
  const separatorFrom = (i: number) => {
    const ampersand = data.indexOf('&', i);
    return ampersand !== -1 ? ampersand : data.indexOf(';', i);
  };
  let i = 0;
  while (i < data.length) {
    if (data[i] === '&' || data[i] === ';') {
      i++;
      continue;
    }
    const separator = separatorFrom(i);
    const equals = data.indexOf('=', i);
    if (equals !== -1 && (separator === -1 || equals < separator)) {
      names.push(unquotePlus(data.slice(i, equals)));
      const end = separatorFrom(equals + 1);
      i = end === -1 ? data.length : end;
    } else if (separator !== -1) {
      names.push(unquotePlus(data.slice(i, separator)));
      i = separator;
    } else {
      break;
    }
  }
  return names;
}

/**
 * Python's `unquote_plus` as far as a field name matters here: `+` is a space and `%XX` a byte
 * (a byte above 0x7f stays a non-ASCII character, so such a name never equals an ASCII one).
 */
function unquotePlus(text: string): string {
  return text
    .replace(/\+/g, ' ')
    .replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
