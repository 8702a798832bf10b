{#- BM25 as seed 004 specifies it, for every model that scores with it (retrieval, lanes, the evidence
    study's typed comparator). -#}

{#- A text's terms: lowercase Unicode letter/number runs, no stemming, no stop words. -#}
{% macro terms(text) -%}
regexp_extract_all(lower({{ text }}), '[\pL\pN]+')
{%- endmacro %}

{#- The positive Robertson IDF: ln(1 + (N - df + 0.5) / (df + 0.5)). -#}
{% macro bm25_idf(documents, df) -%}
ln(1 + ({{ documents }} - {{ df }} + 0.5) / ({{ df }} + 0.5))
{%- endmacro %}

{#- What a term adds to a document's score, idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length /
    average_length)), as a whole number of 1e-12 units: sums of whole units are exact in any order of
    addition, so documents with equal statistics get exactly equal scores and the tie rule decides. -#}
{% macro bm25_weight_units(idf, tf, length, average_length, k1, b) -%}
CAST(round(
    {{ idf }} * {{ tf }} * ({{ k1 }} + 1)
    / ({{ tf }} + {{ k1 }} * (1 - {{ b }} + {{ b }} * {{ length }} / {{ average_length }})) * 1e12
) AS BIGINT)
{%- endmacro %}
