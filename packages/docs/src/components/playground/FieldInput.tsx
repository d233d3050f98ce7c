/**
 * One field of the form: its control (by the field's kind), its label, a line with its type,
 * bounds, allowed values and default, its description, and the API's messages for its value.
 * Image fields also take a file (picked, or dropped on the field), uploaded through the client.
 */
import { type DragEvent, type ReactNode, useId, useState } from 'react';
import { type FieldSpec, shownText, typedValue } from './form-model.ts';
import styles from './Playground.module.css';

interface Props {
  field: FieldSpec;
  required: boolean;
  value: unknown;
  problems: readonly string[] | undefined;
  onChange(value: unknown): void;
  /** Uploads files and answers their URLs; undefined while there is no key. */
  upload: ((files: readonly File[]) => Promise<string[]>) | undefined;
}

function helpLine(field: FieldSpec): string {
  const parts = [field.type];
  if (field.bounds) parts.push(field.bounds);
  if (field.defaultValue) parts.push(`default ${field.defaultValue}`);
  return parts.join(' · ');
}

export default function FieldInput({ field, required, value, problems, onChange, upload }: Props): ReactNode {
  const id = `field-${useId().replace(/:/g, '')}`;
  const [text, setText] = useState(() => shownText(field, value));
  const [uploading, setUploading] = useState<string>();
  const invalid = problems !== undefined && problems.length > 0;
  const described = `${id}-help${invalid ? ` ${id}-error` : ''}`;
  const common = {
    id,
    name: field.name,
    'aria-describedby': described,
    'aria-invalid': invalid || undefined,
    'aria-required': required || undefined,
  };
  const typed = (next: string) => {
    setText(next);
    onChange(typedValue(field, next));
  };

  const addFiles = async (files: readonly File[]) => {
    if (!upload || files.length === 0) return;
    setUploading(`Uploading ${files.map((f) => f.name).join(', ')}…`);
    try {
      const urls = await upload(files);
      const next = field.kind === 'images' ? [...(Array.isArray(value) ? value : []), ...urls] : urls[0];
      setText(shownText(field, next));
      onChange(next);
      setUploading(undefined);
    } catch (error) {
      setUploading(`Upload failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  let control: ReactNode;
  switch (field.kind) {
    case 'boolean':
      control = (
        <input
          {...common}
          type="checkbox"
          checked={value === undefined ? field.defaultJson === true : value === true}
          onChange={(event) => onChange(event.target.checked)}
        />
      );
      break;
    case 'select':
      control = (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => typed(e.target.value)}
        >
          <option value="">
            {field.defaultValue
              ? `default (${JSON.parse(field.defaultValue)})`
              : required
                ? 'choose…'
                : 'not set'}
          </option>
          {field.options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      );
      break;
    case 'choices': {
      const chosen = Array.isArray(value) ? (value as string[]) : [];
      control = (
        <fieldset className={styles.choices} aria-describedby={described}>
          <legend>
            <code>{field.name}</code>
            {required && <span className={styles.required}> (required)</span>}
          </legend>
          {field.options.map((option) => (
            <label key={option} className={styles.choice}>
              <input
                type="checkbox"
                checked={chosen.includes(option)}
                onChange={(event) => {
                  const next = event.target.checked
                    ? [...chosen, option]
                    : chosen.filter((item) => item !== option);
                  onChange(next.length > 0 ? next : undefined);
                }}
              />{' '}
              {option}
            </label>
          ))}
        </fieldset>
      );
      break;
    }
    case 'longtext':
    case 'images':
    case 'json':
      control = (
        <textarea
          {...common}
          rows={field.kind === 'images' ? 2 : 3}
          value={text}
          onChange={(e) => typed(e.target.value)}
        />
      );
      break;
    default:
      control = (
        <>
          <input
            {...common}
            type={field.kind === 'image' ? 'url' : 'text'}
            inputMode={field.kind === 'integer' ? 'numeric' : field.kind === 'number' ? 'decimal' : undefined}
            list={field.options.length > 0 ? `${id}-options` : undefined}
            value={text}
            autoComplete="off"
            onChange={(e) => typed(e.target.value)}
          />
          {field.options.length > 0 && (
            <datalist id={`${id}-options`}>
              {field.options.map((option) => (
                <option key={option} value={option} />
              ))}
            </datalist>
          )}
        </>
      );
  }

  const image = field.kind === 'image' || field.kind === 'images';
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    void addFiles(Array.from(event.dataTransfer.files).filter((file) => file.type.startsWith('image/')));
  };

  return (
    // Dropping a file is a shortcut for pointer users; the file input is the way for everyone.
    // biome-ignore lint/a11y/noStaticElementInteractions: the drop target only adds to the file input
    <div
      className={`${styles.field} ${image ? styles.imageField : ''}`}
      onDragOver={image ? (event) => event.preventDefault() : undefined}
      onDrop={image ? onDrop : undefined}
      data-field={field.name}
    >
      {field.kind === 'choices' ? (
        control
      ) : field.kind === 'boolean' ? (
        <div className={styles.checkboxRow}>
          {control}
          <label htmlFor={id} id={`${id}-label`}>
            <code>{field.name}</code>
          </label>
        </div>
      ) : (
        <>
          <label htmlFor={id} id={`${id}-label`}>
            <code>{field.name}</code>
            {required && <span className={styles.required}> (required)</span>}
          </label>
          {control}
        </>
      )}
      {image && (
        <div className={styles.upload}>
          <label htmlFor={`${id}-file`}>
            {field.kind === 'images' ? 'Add image files' : 'Upload an image'}
          </label>{' '}
          <input
            id={`${id}-file`}
            type="file"
            accept="image/*"
            multiple={field.kind === 'images'}
            disabled={!upload}
            data-upload-for={field.name}
            aria-describedby={`${id}-drop`}
            onChange={(event) => void addFiles(Array.from(event.target.files ?? []))}
          />{' '}
          <span id={`${id}-drop`} className={styles.hint}>
            {upload
              ? 'or drop one here, or use an image of the gallery below'
              : 'enter your API key to upload'}
          </span>
          {uploading && <p role="status">{uploading}</p>}
          {typeof value === 'string' && value.startsWith('http') && (
            <img className={styles.preview} src={value} alt={`Preview of ${field.name}`} />
          )}
        </div>
      )}
      <p id={`${id}-help`} className={styles.help}>
        {helpLine(field)}
        {field.description && <> · {field.description}</>}
      </p>
      {invalid && (
        <p id={`${id}-error`} className={styles.error}>
          {problems.join('; ')}
        </p>
      )}
    </div>
  );
}
