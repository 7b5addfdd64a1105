"""``Flatten$Key``/``$Value``: nested Structs (or Maps) become one level, field names joined by
``delimiter``. Arrays are kept as they are; a Map inside a Struct, or a Struct inside a Map, is
an error, as in Java. Flattened fields are optional when any ancestor was, and inherit an
ancestor's default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import DataError
from connect_core.api.schema import Schema, SchemaType, Struct
from connect_core.config.configdef import ConfigDef, Importance, Type
from connect_core.transforms.field_support import (
    KEY,
    VALUE,
    FieldTransform,
    SchemaCache,
    infer_type,
    require_map,
    require_struct_or_null,
    struct_like,
)
from connect_core.transforms.java_values import java_class_name

PURPOSE = "flattening"
_T = SchemaType
_KEPT = frozenset((_T.INT8, _T.INT16, _T.INT32, _T.INT64, _T.FLOAT32, _T.FLOAT64, _T.BOOLEAN, _T.STRING, _T.BYTES,
                   _T.ARRAY))  # fmt: skip


class Flatten(FieldTransform):
    """Shared logic of ``Flatten$Key`` and ``Flatten$Value``; null values pass through."""

    CONFIG_DEF = ConfigDef().define(
        "delimiter", Type.STRING, ".", None, Importance.MEDIUM,
        "Delimiter to insert between field names from the input record when generating field names for the "
        "output record",
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        self.delimiter: str = self.parse(props)["delimiter"]
        self.cache: SchemaCache[Schema] = SchemaCache()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        value = side.value(record)
        if value is None:
            return record
        schema = side.schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return side.replace(record, None, flat)
        struct = require_struct_or_null(value, PURPOSE)
        new_schema = self.cache.get(schema) or self.cache.put(schema, self._flat_schema(schema))
        if struct is None:
            return side.replace(record, new_schema, None)
        values: dict[str, Any] = {}
        self._flatten_struct(struct, "", values)
        return side.replace(
            record, new_schema, Struct.from_values(new_schema, [values.get(f.name) for f in new_schema.fields])
        )

    def _flatten_map(self, value: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, v in value.items():
            name = self._name(prefix, key)
            if v is None:
                out[name] = None
                continue
            t = infer_type(v)
            if t is None:
                raise DataError(f"Flatten transformation was passed a value of type class {java_class_name(v)} "
                                "which is not supported by Connect's data API")  # fmt: skip
            if t in _KEPT:
                out[name] = v
            elif t is _T.MAP:
                self._flatten_map(v, name, out)
            else:
                raise DataError(f"Flatten transformation does not support class {java_class_name(v)} "
                                f"for record without schemas (for field {name}).")  # fmt: skip

    def _flat_schema(self, schema: Schema) -> Schema:
        fields: list[tuple[str, Schema]] = []
        default = schema.default if isinstance(schema.default, Struct) else None
        self._flat_fields(schema, "", fields, schema.optional, default)
        names = [n for n, _ in fields]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise DataError(f"Cannot create field because of field name duplication {dup}")
        return struct_like(schema, fields)

    def _flat_fields(self, schema: Schema, prefix: str, out: list[tuple[str, Schema]], optional: bool,
                     parent_default: Struct | None) -> None:  # fmt: skip
        for f in schema.fields:
            name = self._name(prefix, f.name)
            f_optional = optional or f.schema.optional
            default = f.schema.default
            if default is None and parent_default is not None:
                default = parent_default.get(f.name)
            if f.schema.type in _KEPT:
                out.append((name, Schema(
                    f.schema.type, optional=f_optional, default=default, name=f.schema.name,
                    version=f.schema.version, doc=f.schema.doc, parameters=f.schema.parameters,
                    value_schema=f.schema.value_schema,
                )))  # fmt: skip
            elif f.schema.type is _T.STRUCT:
                self._flat_fields(f.schema, name, out, f_optional, default if isinstance(default, Struct) else None)
            else:
                raise DataError(f"Flatten transformation does not support {f.schema.type.name} "
                                f"for record with schemas (for field {name}).")  # fmt: skip

    def _flatten_struct(self, struct: Struct, prefix: str, out: dict[str, Any]) -> None:
        for f in struct.schema.fields:
            name = self._name(prefix, f.name)
            if f.schema.type is _T.STRUCT:
                nested = struct.get(f.name)
                if nested is not None:
                    self._flatten_struct(nested, name, out)
            elif f.schema.type in _KEPT:
                out[name] = struct.get(f.name)
            else:
                raise DataError(f"Flatten transformation does not support {f.schema.type.name} "
                                f"for record with schemas (for field {name}).")  # fmt: skip


class FlattenKey(Flatten):
    SIDE = KEY


class FlattenValue(Flatten):
    SIDE = VALUE
