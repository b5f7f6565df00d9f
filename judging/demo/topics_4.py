"""Demo topics 116–120: succulents, squeaky floors, heat pumps, pruning shears, dehumidifiers."""

from __future__ import annotations

from .spec import doc, topic

TOPICS = [
    topic(
        "116",
        "garden",
        text="how often to water succulents",
        description="""
            The user wants to know how often to water succulents, indoors or outdoors,
            without over-watering them.
        """,
        narrative="""
            A perfect document explains the soak-and-dry method, gives typical intervals
            by season and situation (active growth vs winter dormancy, indoors vs
            outdoors, pot size), and the signs of over- and under-watering. A guide with
            good intervals but less on signs or seasons is highly relevant. Documents on
            one aspect (winter watering, signs of over-watering) are relevant. Soil mix,
            pots with drainage or propagation are marginal. Watering lawns or other
            plants, and non-plant "succulents" (recipes), are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "How often to water succulents: the soak-and-dry method",
                """
                Succulents store water in their leaves, so they want deep, infrequent
                watering. Soak the soil until water runs out of the drainage hole, then
                wait until it is completely dry before watering again.

                - **Spring and summer (growing season)**: every 7–14 days indoors, more
                often outdoors in full sun or in small pots.
                - **Autumn**: stretch it to every two or three weeks.
                - **Winter**: once a month or less; many succulents are dormant.

                Over-watering shows as soft, translucent or black leaves and a mushy stem.
                Under-watering shows as wrinkled, deflated leaves that plump up within a
                day of watering. When in doubt, wait.
            """,
            ),
            doc(
                4,
                "forum",
                "Succulent watering schedule that finally worked for me",
                """
                I killed so many succulents by loving them too much. What works now, on a
                sunny windowsill: water thoroughly every 10 days from April to September,
                every three weeks in autumn, monthly in winter. I check first with a
                wooden skewer: if it comes out with any soil stuck to it, I wait.

                Reply from cactus_carl: Good schedule. Also: small terracotta pots dry out
                twice as fast as big plastic ones, and mushy leaves mean stop watering
                immediately.
            """,
                extra={"replies": 41},
            ),
            doc(
                3,
                "faq",
                "How much water does a succulent need?",
                """
                Water until the soil is saturated and water drains freely, then let the
                soil dry completely. A small splash every few days is the worst approach:
                the top stays damp, roots stay shallow and rot sets in. For most indoor
                succulents that means every one to two weeks in summer.
            """,
            ),
            doc(
                3,
                "guide",
                "Signs you are over-watering your succulents",
                """
                Leaves that turn yellow, translucent or mushy, fall off at a touch, or a
                stem that blackens from the base are signs of too much water. Stop
                watering, let the soil dry out, and repot into gritty mix if the roots are
                brown and soft.
            """,
            ),
            doc(
                3,
                "blog",
                "Watering succulents in winter",
                """
                Most succulents rest in winter when light is low. Water sparingly, about
                once a month, just enough to stop leaves shrivelling. Winter-growing types
                such as aeoniums are the exception: they grow in the cool months and need
                regular water then.
            """,
            ),
            doc(
                2,
                "guide",
                "Outdoor succulents in hot climates",
                """
                Succulents in the ground need water every week or two during hot, dry
                summers, especially in their first year. Water early in the morning and
                deeply. Established plants in good soil can go much longer.
            """,
            ),
            doc(
                2,
                "faq",
                "Why are my succulent leaves wrinkled?",
                """
                Wrinkled, soft leaves usually mean the plant is thirsty and using its
                stored water. Give it a thorough soak. If the leaves are wrinkled and
                mushy, the cause is rot from too much water.

                After watering, a thirsty succulent plumps up within a day or two. If it does
                not, check the roots: dried, brittle roots mean it has been dry for too long,
                while brown, soft ones mean rot.
            """,
            ),
            doc(
                2,
                "product",
                "Succulent and cactus watering bottle with long spout",
                """
                A squeeze bottle with a bent spout that delivers water to the soil, not the
                leaves. Ideal for small pots and terrariums.
            """,
                specs=[("Volume", "250 ml"), ("Price", "$6.50")],
                extra={"price": "$6.50"},
            ),
            doc(
                1,
                "guide",
                "The best soil mix for succulents",
                """
                Use a gritty mix: half cactus compost and half coarse grit, pumice or
                perlite. It drains fast so roots never sit wet.

                Standard potting compost holds too much water on its own, even when it says it
                is suitable for cacti. Top-dress the pot with grit to keep the base of the plant
                dry and to show off the rosette.
            """,
            ),
            doc(
                1,
                "guide",
                "Propagating succulents from leaves",
                """
                Twist off a healthy leaf, let it callus for a few days, and lay it on dry
                mix. Mist lightly once roots appear; a new rosette forms in a few weeks.

                Not every leaf succeeds, so start several. Echeverias and sedums root easily,
                while some aloes and haworthias are better divided from offsets.
            """,
            ),
            doc(
                1,
                "forum",
                "Do succulents need pots with drainage holes?",
                """
                Beautiful pot, no hole. Can I plant a succulent in it?

                Reply from potterpaula: use it as a cachepot: keep the plant in a plastic
                pot with holes inside it and tip out any water after watering.
            """,
                extra={"replies": 10},
            ),
            doc(
                0,
                "guide",
                "How often to water a new lawn",
                """
                Keep new seed moist with light watering twice a day until it germinates,
                then water deeply two or three times a week to encourage deep roots.

                New turf needs a thorough soak every day for the first two weeks; lift a corner
                to check that the soil beneath is wet. Avoid walking on new grass until it has
                been mown two or three times.
            """,
            ),
            doc(
                0,
                "blog",
                "Succulent roast pork with crackling",
                """
                Score the skin, rub with salt and leave uncovered in the fridge overnight.
                Roast hot for half an hour, then low for two hours, for succulent meat and
                crisp crackling.

                Rest the joint for twenty minutes before carving, and serve with roast potatoes,
                apple sauce and a sharp green salad. Leftovers make excellent sandwiches.
            """,
                site="example-kitchen.test",
            ),
            doc(
                0,
                "guide",
                "Watering tomatoes in hot weather",
                """
                Tomatoes need deep, regular watering: about 5 cm a week, more in heat. Water
                at the base in the morning, and mulch to keep the moisture even.

                Plants in pots may need watering twice a day in a heatwave. Irregular watering
                leads to split fruit and blossom end rot, so a drip line on a timer is worth
                considering.
            """,
                also={"107": 1},
            ),
        ],
    ),
    topic(
        "117",
        "home",
        text="fix squeaky hardwood floor",
        description="""
            The user has hardwood floorboards that squeak when walked on and wants to stop
            the squeaks themselves.
        """,
        narrative="""
            A perfect document explains why floors squeak (boards rubbing or moving on
            nails, gaps between joists and subfloor) and gives fixes from above (trim-head
            screws, squeak repair kits, powdered graphite) and from below (shims,
            construction adhesive, screws through the subfloor). One method explained well
            is highly relevant or relevant. Squeaky stairs, laminate floors or refinishing
            hardwood are marginal. Squeaky doors, car brakes or hardwood furniture are not
            relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "How to fix a squeaky hardwood floor, from above and below",
                """
                Squeaks come from wood rubbing on wood or on loose nails, usually because a
                board or the subfloor has moved away from the joist.

                From below (an unfinished basement or crawlspace):

                - Have someone walk above while you find the squeak.
                - Tap a shim coated in wood glue into any gap between joist and subfloor.
                - Or run construction adhesive along the joint, or drive a short screw up
                through the subfloor into the board; check the length so it cannot poke
                through.

                From above:

                - Drive a trim-head screw through the board into a joist and fill the hole
                with matching wax.
                - Use a squeak repair kit that snaps off the screw below the surface.
                - For boards rubbing together, work powdered graphite or talc into the
                seam.
            """,
            ),
            doc(
                4,
                "forum",
                "Squeaky floor fixed from the basement, total cost $12",
                """
                Our hallway squeaked at every step. With my wife walking above, I found
                the spot from the basement: a gap of a few millimetres between the joist
                and the subfloor. I glued three thin shims into it and added a bead of
                construction adhesive along the joist. Silent.

                In the bedroom there is no access below, so I used a squeak kit with
                snap-off screws through the carpet-free oak. Three screws, filled the
                holes with wax crayon. You cannot see them.
            """,
                extra={"replies": 15},
            ),
            doc(
                3,
                "guide",
                "Stop squeaks with trim-head screws",
                """
                Locate the joist with a stud finder, pre-drill a small pilot hole through
                the hardwood at an angle, and drive a trim-head screw until the head sits
                just below the surface. Fill the hole with a wax filler stick in the floor
                colour.
            """,
            ),
            doc(
                3,
                "product",
                "SilentStep floor squeak repair kit",
                """
                Fix squeaks through hardwood or carpet without lifting boards. The fixture
                guides the screw to the right depth, then the head snaps off below the
                surface.
            """,
                specs=[
                    ("Includes", "depth fixture, 50 scored screws, driver bit"),
                    ("Price", "$27.99"),
                ],
                extra={"price": "$27.99", "rating": "4.3 / 5"},
            ),
            doc(
                3,
                "faq",
                "Why does my hardwood floor squeak?",
                """
                Wood expands and contracts with humidity. As boards shrink in dry winter
                air, they rub against each other or slide along nails, and gaps open
                between the subfloor and joists. A humidifier in winter reduces squeaks; a
                persistent squeak in one spot needs a screw or shim.
            """,
            ),
            doc(
                2,
                "blog",
                "Graphite powder: the renter's squeaky floor fix",
                """
                If you cannot drill into the floor, sprinkle powdered graphite or talc into
                the seams of the noisy boards and work it in with a cloth while walking on
                them. It lubricates the rubbing edges. It may not last, but it costs almost
                nothing.
            """,
            ),
            doc(
                2,
                "forum",
                "Is a squeaky floor a sign of structural damage?",
                """
                Our 1920s house has squeaky floors everywhere. Should we worry?

                Reply from oldhouse_olga: almost never. Squeaks are normal movement. Worry
                about bouncy or sagging spots, which can mean a damaged joist.
            """,
                extra={"replies": 9},
            ),
            doc(
                1,
                "guide",
                "How to fix squeaky stairs",
                """
                From above, glue small wooden blocks or shims into the joint where the
                tread meets the riser, or screw through the tread into the riser. From
                below, glue blocks into the corners.

                Sprinkling talc into the joints is a quick temporary fix on carpeted stairs. On
                an old staircase, check that wedges under the treads have not worked loose.
            """,
            ),
            doc(
                1,
                "faq",
                "Why is my laminate floor creaking?",
                """
                Laminate floats on an underlay; creaks usually mean an uneven subfloor or
                an expansion gap that is too tight. Check the edges under the skirting.

                If the floor moves underfoot near a wall, the skirting may be pinning it; trim
                back the boards to restore the gap. A thicker underlay can help on a slightly
                uneven subfloor.
            """,
            ),
            doc(
                1,
                "guide",
                "Refinishing hardwood floors: sanding and sealing",
                """
                Sand with progressively finer grits using a drum sander, vacuum thoroughly,
                stain if you like, and apply three coats of polyurethane.

                Hire an edger for the edges and corners, and keep dust sealed off from the rest
                of the house with plastic sheeting. Water-based finishes dry fast and stay
                clear; oil-based finishes are warmer in tone.
            """,
            ),
            doc(
                0,
                "guide",
                "How to stop a door from squeaking",
                """
                Tap out the hinge pin, clean it, coat it with petroleum jelly or a silicone
                lubricant and tap it back in. Repeat for each hinge.

                If the squeak comes from the latch rather than the hinges, a drop of oil on the
                latch bolt solves it. Avoid cooking oil, which turns sticky and attracts dust.
            """,
            ),
            doc(
                0,
                "guide",
                "Why are my brakes squeaking?",
                """
                Light squealing is often dust or glazed pads. A constant high-pitched
                squeal can be the wear indicator telling you the pads need replacing.

                Grinding, rather than squealing, means metal on metal: get the brakes checked
                straight away. New pads can squeak for a few days while they bed in.
            """,
                site="example-auto.test",
            ),
            doc(
                0,
                "product",
                "Solid oak dining table, 180 cm",
                """
                A solid hardwood table with a natural oil finish, seating six to eight.

                Each table is made to order from sustainably sourced oak, so grain and colour
                vary. Delivered with a care kit; re-oil once or twice a year.
            """,
                specs=[("Wood", "solid oak"), ("Price", "$1,450")],
                extra={"price": "$1,450"},
            ),
            doc(
                0,
                "review",
                "Hardwood vs engineered wood flooring",
                """
                Solid hardwood can be refinished many times and lasts generations.
                Engineered wood is more stable in humid rooms and over underfloor heating.

                Engineered boards have a real wood top layer on a plywood core, so they can be
                refinished a few times depending on the thickness of the wear layer. Both need
                protective pads under furniture legs.
            """,
            ),
        ],
    ),
    topic(
        "118",
        "home",
        text="heat pump vs gas furnace running cost",
        description="""
            The user is deciding between a heat pump and a gas furnace and wants to compare
            what each costs to run.
        """,
        narrative="""
            A perfect document compares running costs of heat pumps and gas furnaces with
            the factors that drive them (efficiency as COP or HSPF vs AFUE, electricity and
            gas prices, climate, cold-climate models) and ideally worked examples. A
            comparison without figures, or running costs for only one system, is highly
            relevant or relevant. Installation prices, rebates or maintenance alone are
            marginal. Water heaters, pool heat pumps or cooking with gas are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Heat pump or gas furnace: what will it cost to heat your home?",
                """
                The running cost of each comes down to two numbers: what you pay for energy
                and how efficiently the system turns it into heat.

                A gas furnace with a 95% AFUE rating delivers 0.95 units of heat per unit
                of gas. A heat pump moves heat rather than making it, with a seasonal
                coefficient of performance (COP) of 2.5 to 3.5 in most climates, so each
                kWh of electricity delivers 2.5–3.5 kWh of heat.

                **Worked example**: a home needing 15,000 kWh of heat a year. At $0.045 per
                kWh of gas, the furnace costs about $710. At $0.16 per kWh of electricity
                and a COP of 3, the heat pump costs about $800; at $0.12 it costs $600.

                The rule of thumb: if electricity costs less than about three times as much
                per kWh as gas, a heat pump is cheaper to run. In very cold climates, choose
                a cold-climate model, whose COP stays near 2 at −15 °C.
            """,
            ),
            doc(
                4,
                "review",
                "We tracked a year of bills: heat pump vs gas",
                """
                Two nearly identical houses on the same street, one with a new
                cold-climate heat pump and one with a 96% gas furnace. Over a year the heat
                pump house spent $1,020 on heating electricity, the furnace house $1,140 on
                gas. In the coldest week the heat pump cost more per day, but it won in
                spring and autumn, when its efficiency is highest. Electricity prices were
                $0.14 per kWh.
            """,
                extra={"published": "2024-04-09"},
            ),
            doc(
                3,
                "faq",
                "Is a heat pump cheaper to run than a gas furnace?",
                """
                Often, but not always. It depends on your local electricity and gas prices
                and on how cold it gets. Heat pumps are three times as efficient or more in
                mild weather, but lose efficiency in deep cold. In regions with cheap gas
                and expensive electricity, a modern gas furnace can still be cheaper to run.
            """,
            ),
            doc(
                3,
                "forum",
                "Switched from gas furnace to heat pump, my bills",
                """
                Switched last year in a mild coastal climate. Gas heating used to cost us
                about $95 a month in winter; the heat pump adds about $70 a month to the
                electricity bill. We also cancelled the gas connection and saved the
                standing charge.

                Reply from hvac_hannah: mild climates are where heat pumps shine. In a
                colder area your savings would be smaller.
            """,
                extra={"replies": 36},
            ),
            doc(
                3,
                "guide",
                "Understanding HSPF, COP and AFUE",
                """
                AFUE is the share of a furnace's fuel that becomes heat; 95% is typical for
                new condensing furnaces. COP is a heat pump's heat output divided by its
                electricity input at a given temperature. HSPF is a seasonal average in
                BTU per watt-hour; divide HSPF by 3.41 to get an approximate seasonal COP.
            """,
            ),
            doc(
                2,
                "blog",
                "What it costs to run a gas furnace this winter",
                """
                With gas prices where they are, heating an average home with a modern
                furnace costs between $600 and $1,200 a season, depending on climate and
                insulation. Older furnaces at 80% AFUE cost a fifth more.
            """,
            ),
            doc(
                2,
                "review",
                "Cold-climate heat pumps: do they work at −20 °C?",
                """
                Our field test found cold-climate heat pumps kept homes warm at −20 °C
                with a COP of about 1.8: still nearly twice as efficient as electric
                resistance heating.

                Below that, output dropped and the backup heat in two homes switched on for a
                few hours on the coldest nights. Good insulation and correctly sized units made
                the biggest difference to comfort.
            """,
                extra={"published": "2025-02-17"},
            ),
            doc(
                2,
                "news",
                "Electricity and gas prices diverge this winter",
                """
                Residential electricity prices rose 4% year on year while natural gas fell
                9%, narrowing the running-cost advantage of heat pumps in some regions.

                Analysts caution that prices vary widely by region, and that time-of-use
                electricity tariffs can change the picture for heat pump owners who can shift
                their heating to cheaper hours.
            """,
                extra={"published": "2024-12-05"},
            ),
            doc(
                1,
                "review",
                "How much does a heat pump cost to install?",
                """
                An air-source heat pump for a typical house costs $8,000 to $16,000
                installed, depending on size and ductwork. Rebates can cut that by
                thousands.

                Ductless mini-splits cost less for one or two rooms, while homes without ducts
                may need several indoor units. Get at least three quotes and ask each installer
                for a heat loss calculation.
            """,
            ),
            doc(
                1,
                "news",
                "New federal rebates for heat pump installations",
                """
                Households can now claim rebates of up to $8,000 for qualifying heat pump
                installations, with income limits.

                The rebates are paid at the point of sale through participating contractors.
                Separate tax credits are available for households above the income limits.
            """,
                extra={"published": "2023-11-30"},
            ),
            doc(
                1,
                "guide",
                "Annual furnace maintenance checklist",
                """
                Replace the filter, check the flame sensor, inspect the flue and have the
                heat exchanger checked for cracks before the heating season.

                A professional service usually costs $80 to $150 and should include a carbon
                monoxide check. Fit a carbon monoxide alarm near bedrooms if you have any gas
                appliance.
            """,
            ),
            doc(
                0,
                "review",
                "Heat pump water heaters: are they worth it?",
                """
                A heat pump water heater uses about a third of the electricity of a
                standard electric tank, and pays back in three to five years.

                They need space around them, ideally in a basement or garage, because they pull
                heat from the surrounding air and cool the room as they work. Most models have a
                backup electric element for periods of high demand.
            """,
            ),
            doc(
                0,
                "product",
                "Pool heat pump, 50,000 BTU",
                """
                Extend your swimming season with an efficient pool heat pump. Titanium
                heat exchanger and digital controls.

                Sized for pools up to 60 m³ (about 15,000 gallons). Quiet operation and a
                corrosion-resistant cabinet for outdoor installation.
            """,
                specs=[("Output", "50,000 BTU"), ("Price", "$2,399")],
                extra={
                    "price": "$2,399",
                },
            ),
            doc(
                0,
                "blog",
                "Gas vs induction cooktops: a cook's view",
                """
                Induction boils water faster and is easier to clean; gas gives visual
                control and works with any pan. Both make great food.

                Induction needs magnetic pans: if a magnet sticks to the base, it will work.
                Many chefs who tried induction reluctantly now say they would not go back.
            """,
                site="example-kitchen.test",
            ),
        ],
    ),
    topic(
        "119",
        "garden",
        text="how to sharpen pruning shears",
        description="""
            The user wants to sharpen their bypass pruners (secateurs) at home.
        """,
        narrative="""
            A perfect document explains how to clean, (optionally) disassemble and sharpen
            bypass pruners: which tool (diamond file, whetstone), keeping the bevel angle,
            sharpening only the bevelled side, removing the burr, oiling and testing.
            Shorter correct instructions are highly relevant or relevant. Cleaning or
            oiling only, sharpening other garden tools, or choosing pruners is marginal.
            Kitchen knives, scissors for hair or "pruning" in other senses (machine
            learning, finance) are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Sharpen your pruning shears in ten minutes",
                """
                Sharp secateurs make clean cuts that heal fast; blunt ones crush stems and
                invite disease.

                1. **Clean** the blades with warm soapy water, remove sap with rubbing
                alcohol or steel wool.
                2. **Take them apart** if you can: most bypass pruners come apart with one
                bolt, which makes sharpening easier.
                3. **Sharpen the bevelled edge only**, with a diamond file or a small
                whetstone, following the existing angle (about 20–25°). Stroke from the
                base to the tip, in one direction, until the edge shines evenly.
                4. **Remove the burr** on the flat back with one or two light strokes held
                flat. Never bevel the flat side.
                5. **Oil** the pivot and blades, reassemble, and test on a sheet of paper.
            """,
            ),
            doc(
                4,
                "forum",
                "My method for sharpening bypass pruners",
                """
                I sharpen my secateurs every spring. Unbolt them, clean off sap with
                alcohol, then clamp the cutting blade in a vice. A fine diamond file along
                the bevel, following the factory angle, ten to fifteen strokes. Then one
                flat pass on the back to knock the burr off. Drop of oil on the pivot.

                Reply from orchard_ollie: the anvil-style ones are different; only
                sharpen the blade, never the anvil.
            """,
                extra={"replies": 12},
            ),
            doc(
                3,
                "faq",
                "Whetstone or diamond file for secateurs?",
                """
                Both work. A small diamond file is the easiest to control on a curved blade
                and cuts fast. A fine whetstone gives a slightly keener edge. Whichever you
                use, keep to the blade's bevel angle and sharpen only the bevelled side.
            """,
            ),
            doc(
                3,
                "guide",
                "Keeping bypass pruners sharp through the season",
                """
                A few strokes with a pocket diamond sharpener every few weeks keeps the
                edge keen. Hold it flat against the bevel, stroke towards the tip, and
                finish with a single pass on the flat back.

                Wipe the blades after each use and oil the pivot monthly, and the edge will last
                much longer between sharpenings.
            """,
            ),
            doc(
                3,
                "blog",
                "Restoring a rusty pair of old secateurs",
                """
                I found my grandfather's pruners rusted shut. A soak in penetrating oil
                freed the pivot; steel wool cleaned the blades. Then I sharpened the bevel
                with a diamond file at the original angle, removed the burr and oiled
                everything. They cut like new.
            """,
            ),
            doc(
                2,
                "product",
                "Pocket diamond sharpener for garden tools",
                """
                A compact, tapered diamond file for pruners, loppers and knives. Works dry
                or with water.

                The tapered shape fits the curve of bypass pruner blades, and the fine grit side
                gives a clean final edge. Clip it to your belt or keep it in the tool bag.
            """,
                specs=[("Grit", "400 / 600"), ("Price", "$12.95")],
                extra={
                    "price": "$12.95",
                    "rating": "4.6 / 5",
                },
            ),
            doc(
                2,
                "faq",
                "How do I clean sap off my pruning shears?",
                """
                Wipe with rubbing alcohol or a little vegetable oil on a rag, or scrub with
                steel wool for dried sap. Disinfect between plants when cutting diseased
                wood.

                For stubborn resin from conifers, soak the blades in warm soapy water first, and
                dry them thoroughly before oiling.
            """,
            ),
            doc(
                1,
                "guide",
                "How to sharpen a spade and a hoe",
                """
                Clamp the tool, and file the edge at about 45° with a mill file, stroking
                away from the edge. Oil the metal to keep rust away.

                A sharp spade cuts through roots and turf with much less effort. Only file the
                inside edge of the blade, the side facing you when you dig.
            """,
            ),
            doc(
                1,
                "review",
                "Bypass vs anvil pruners: which to buy",
                """
                Bypass pruners cut like scissors and are best for live stems; anvil
                pruners crush against a flat surface and suit dead wood. Pick a pair that
                can be taken apart for sharpening.

                Ratchet pruners multiply your hand strength in stages and help anyone with weak
                grip. Try the handles in the shop: they should open comfortably within your hand
                span.
            """,
            ),
            doc(
                1,
                "guide",
                "Winter care for garden tools",
                """
                Clean soil off, sharpen edges, oil metal parts and wooden handles, and
                store everything dry.

                Wooden handles benefit from a coat of linseed oil, and a bucket of oily sand is
                an easy way to clean and protect spades and forks after each use. Drain hoses
                and store them coiled, out of the frost.
            """,
            ),
            doc(
                0,
                "guide",
                "How to sharpen a kitchen knife on a whetstone",
                """
                Soak the stone, hold the knife at about 15°, and sweep the edge across the
                coarse side, then the fine side, alternating sides to raise and remove a
                burr.

                Test the edge by slicing a sheet of paper: a sharp knife glides through without
                tearing. A few strokes on a honing rod before each use keep it sharp for longer
                between sessions.
            """,
                site="example-kitchen.test",
            ),
            doc(
                0,
                "blog",
                "Neural network pruning explained",
                """
                Pruning removes weights or neurons from a trained network to make it
                smaller and faster, often with little loss of accuracy after fine-tuning.

                Structured pruning removes whole channels or layers and speeds up inference on
                ordinary hardware, while unstructured pruning zeroes individual weights and
                needs sparse-aware libraries to pay off.
            """,
                site="example-tech.test",
            ),
            doc(
                0,
                "product",
                "Professional hairdressing scissors, 6 inch",
                """
                Japanese steel hair-cutting shears with an adjustable tension screw and
                finger rest.

                An offset handle reduces wrist strain during long days at the chair. Supplied
                with a leather case, cleaning cloth and oil.
            """,
                specs=[("Length", "6 in"), ("Price", "$79")],
                extra={"price": "$79"},
            ),
            doc(
                0,
                "news",
                "Companies prune budgets as costs rise",
                """
                Several large retailers announced cuts to marketing and store openings,
                pruning budgets to protect margins.

                Executives pointed to higher wages and shipping costs, and said hiring would
                slow for the rest of the year. Analysts expect more announcements as the
                earnings season continues.
            """,
                extra={"published": "2024-01-18"},
            ),
        ],
    ),
    topic(
        "120",
        "home",
        text="what size dehumidifier for basement",
        description="""
            The user wants to know what capacity of dehumidifier they need for their
            basement.
        """,
        narrative="""
            A perfect document explains how to size a basement dehumidifier from the
            area and how damp the space is (capacity in pints or litres per day), notes the
            rating standards, and covers placement, drainage and target humidity. Sizing
            charts or advice with less context are highly relevant or relevant. Product
            pages with a stated coverage are relevant. Dealing with basement water leaks,
            or dehumidifiers for small rooms, is marginal. Humidifiers, air purifiers and
            unrelated basement projects are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Dehumidifier sizing for basements: a practical chart",
                """
                Size by floor area and how damp the basement is. Capacities below use the
                current US test standard (pints per day at 65 °F, 60% humidity).

                - **Moderately damp** (musty smell in humid weather): 500 sq ft, 22 pints;
                1,000 sq ft, 30 pints; 1,500 sq ft, 35 pints.
                - **Very damp** (always feels damp, condensation): add about 10 pints.
                - **Wet** (damp walls, visible moisture): go up to 50 pints or a whole-house
                unit.

                Aim for 45–50% relative humidity. Use a model with a pump or a gravity
                drain to a floor drain, so you do not empty a bucket daily, and keep it away
                from walls for airflow. Older ratings were measured at 80 °F, so an old
                "70-pint" unit equals roughly a modern 50-pint one.
            """,
            ),
            doc(
                4,
                "forum",
                "Sized a dehumidifier for our 1,200 sq ft basement",
                """
                Our basement smelled musty all summer, hygrometer said 72%. I read the
                sizing charts and went with a 35-pint (new rating) unit with a built-in
                pump, hose into the laundry sink. It brought humidity down to 48% in three
                days and keeps it there.

                Reply from dryhome_dan: Good choice. People buy the biggest unit they can
                find, but an oversized one cycles on and off. If the walls are actually
                wet, fix the water first.
            """,
                extra={"replies": 18},
            ),
            doc(
                3,
                "faq",
                "How many pints dehumidifier do I need?",
                """
                For a moderately damp 1,000 square foot space, about 30 pints a day under
                the current rating is enough; for very damp spaces, about 40. Double check
                whether a product quotes the old or the new rating, since the old numbers
                look larger.
            """,
            ),
            doc(
                3,
                "review",
                "Best basement dehumidifiers of the year",
                """
                We ran each dehumidifier in a damp 1,100 sq ft test basement. The
                AeroDry 50 pulled humidity from 75% to 50% fastest, with a built-in pump.
                The Breezewell 35 is the best value for basements up to 1,200 sq ft.
            """,
                extra={"published": "2024-06-21"},
            ),
            doc(
                3,
                "guide",
                "The right humidity level for a basement",
                """
                Keep a basement between 40% and 50% relative humidity. Above 60%, mould and
                dust mites thrive; below 30%, wood can shrink and crack. A cheap hygrometer
                tells you where you are and whether your dehumidifier is large enough.
            """,
            ),
            doc(
                2,
                "product",
                "Breezewell 35-pint dehumidifier with pump",
                """
                Energy-efficient dehumidifier for basements up to 1,200 sq ft. Built-in
                pump and 5 m drain hose for continuous drainage.
            """,
                specs=[
                    ("Capacity", "35 pints/day (2019 standard)"),
                    ("Coverage", "up to 1,200 sq ft"),
                    ("Price", "$279"),
                ],
                extra={"price": "$279", "rating": "4.5 / 5"},
            ),
            doc(
                2,
                "product",
                "AeroDry 50 high-capacity dehumidifier",
                """
                Our most powerful portable dehumidifier, for large or very damp basements.
                Auto-restart after power cuts and washable filter.
            """,
                specs=[
                    ("Capacity", "50 pints/day"),
                    ("Coverage", "up to 4,500 sq ft"),
                    ("Price", "$349"),
                ],
                extra={"price": "$349", "rating": "4.2 / 5"},
            ),
            doc(
                2,
                "faq",
                "Old vs new dehumidifier ratings: why did my 70-pint shrink?",
                """
                Since 2019, dehumidifiers are tested at 65 °F rather than 80 °F, which is
                closer to basement conditions. The same machine now gets a lower number: an
                old 70-pint model is about a 50-pint model under the new standard.
            """,
            ),
            doc(
                1,
                "guide",
                "Waterproofing a leaky basement",
                """
                Regrade soil so it slopes away from the house, extend downspouts, and seal
                cracks with hydraulic cement. Persistent leaks may need an interior drain
                and sump pump.

                White, chalky deposits on the walls show where water has come through. Interior
                sealers help with dampness but will not stop water under pressure.
            """,
            ),
            doc(
                1,
                "review",
                "Small dehumidifiers for bedrooms and closets",
                """
                Mini dehumidifiers that pull half a litre a day suit wardrobes and small
                bathrooms. They are quiet but far too small for a basement.

                Desiccant models work better than compressor models in cold rooms, and
                rechargeable moisture absorbers need no power at all. Empty the small tanks
                often.
            """,
            ),
            doc(
                1,
                "forum",
                "Dehumidifier running constantly in the basement",
                """
                My dehumidifier never shuts off.

                Reply from hvac_hannah: check the filter, make sure the room is closed off
                from the rest of the house, and check whether the coils ice up when the
                basement is cold.
            """,
                extra={"replies": 6},
            ),
            doc(
                0,
                "review",
                "Best humidifiers for dry winter air",
                """
                Evaporative humidifiers are self-regulating and safe; ultrasonic models are
                quiet but can leave white dust with hard water.

                Clean the tank weekly to prevent mould and bacteria, and aim for 40–50% humidity
                indoors; much higher encourages condensation on windows.
            """,
            ),
            doc(
                0,
                "guide",
                "Finishing a basement: a planning guide",
                """
                Check local permits, plan egress windows for bedrooms, insulate the walls
                and choose moisture-tolerant flooring such as luxury vinyl.

                Budget for a dedicated circuit and good lighting, since basements feel gloomy
                without them. Leave access to the water meter, drains and shut-off valves behind
                removable panels.
            """,
            ),
            doc(
                0,
                "product",
                "HEPA air purifier for large rooms",
                """
                True HEPA air purifier for rooms up to 50 m², with an air quality sensor
                and auto mode.

                Three fan speeds and a sleep mode, with a filter-change indicator. Replacement
                filters last six to twelve months.
            """,
                specs=[("Coverage", "50 m²"), ("Price", "$199")],
                extra={"price": "$199"},
            ),
        ],
    ),
]
